// Command sqs-go serves the SQS calls of test/sqs-conformance.test.ts with aws-sdk-go-v2: settings
// as the first JSON line on stdin, then one call a line ({"id", "operation", "params"} with AWS JSON
// names), each answered as one JSON line {"id", "ok": answer} or {"id", "error": code}. Calls run
// at once as they come, so the test's "at once" steps reach the door together. No retries: a refusal
// answers as itself.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

type settings struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

type request struct {
	ID        int             `json:"id"`
	Operation string          `json:"operation"`
	Params    json.RawMessage `json:"params"`
}

type answer struct {
	ID     int    `json:"id"`
	Ok     any    `json:"ok,omitempty"`
	Error  string `json:"error,omitempty"`
	Failed string `json:"failed,omitempty"`
}

// call decodes params into the operation's input (the SDK's field names are the AWS JSON names) and sends it.
func call[In any, Out any](ctx context.Context, params json.RawMessage, send func(context.Context, *In, ...func(*sqs.Options)) (*Out, error)) (any, error) {
	input := new(In)
	decoder := json.NewDecoder(bytes.NewReader(params))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(input); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return send(ctx, input)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	if !in.Scan() {
		fail(errors.New("no settings line"))
	}
	var s settings
	if err := json.Unmarshal(in.Bytes(), &s); err != nil {
		fail(err)
	}
	client := sqs.New(sqs.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKeyID, SecretAccessKey: s.SecretAccessKey, Source: "conformance"}, nil
		})),
		Retryer: aws.NopRetryer{},
	})
	operations := map[string]func(context.Context, json.RawMessage) (any, error){
		"GetQueueUrl": func(ctx context.Context, p json.RawMessage) (any, error) { return call(ctx, p, client.GetQueueUrl) },
		"GetQueueAttributes": func(ctx context.Context, p json.RawMessage) (any, error) {
			return call(ctx, p, client.GetQueueAttributes)
		},
		"ReceiveMessage": func(ctx context.Context, p json.RawMessage) (any, error) { return call(ctx, p, client.ReceiveMessage) },
		"DeleteMessage":  func(ctx context.Context, p json.RawMessage) (any, error) { return call(ctx, p, client.DeleteMessage) },
		"DeleteMessageBatch": func(ctx context.Context, p json.RawMessage) (any, error) {
			return call(ctx, p, client.DeleteMessageBatch)
		},
		"ChangeMessageVisibility": func(ctx context.Context, p json.RawMessage) (any, error) {
			return call(ctx, p, client.ChangeMessageVisibility)
		},
		"ChangeMessageVisibilityBatch": func(ctx context.Context, p json.RawMessage) (any, error) {
			return call(ctx, p, client.ChangeMessageVisibilityBatch)
		},
		"PurgeQueue": func(ctx context.Context, p json.RawMessage) (any, error) {
			return call(ctx, p, client.PurgeQueue)
		},
	}

	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	write := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		if err := out.Encode(v); err != nil {
			fail(err)
		}
	}
	write(map[string]string{"sdk": sdkVersion()})

	var wg sync.WaitGroup
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fail(err)
		}
		operation, known := operations[r.Operation]
		if !known {
			fail(fmt.Errorf("operation %q is not driven", r.Operation))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			result, err := operation(context.Background(), r.Params)
			var apiErr smithy.APIError
			switch {
			case errors.As(err, &apiErr):
				write(answer{ID: r.ID, Error: apiErr.ErrorCode()})
			case err != nil:
				// Not an answer of the door (a transport or decoding failure): the test fails on it, with the reason.
				write(answer{ID: r.ID, Failed: err.Error()})
			default:
				write(answer{ID: r.ID, Ok: awsShape(result)})
			}
		}()
	}
	if err := in.Err(); err != nil {
		fail(err)
	}
	wg.Wait()
}

// awsShape is an output as AWS JSON: its members without the SDK's metadata, absent ones left out.
func awsShape(output any) any {
	encoded, err := json.Marshal(output)
	if err != nil {
		fail(err)
	}
	var shape any
	if err := json.Unmarshal(encoded, &shape); err != nil {
		fail(err)
	}
	if members, isObject := shape.(map[string]any); isObject {
		delete(members, "ResultMetadata")
	}
	return withoutNulls(shape)
}

func withoutNulls(value any) any {
	switch v := value.(type) {
	case map[string]any:
		for key, member := range v {
			if member == nil {
				delete(v, key)
			} else {
				v[key] = withoutNulls(member)
			}
		}
	case []any:
		for i, item := range v {
			v[i] = withoutNulls(item)
		}
	}
	return value
}

// sdkVersion is the service/sqs module the binary was built with, for the test's record of what ran.
func sdkVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/aws/aws-sdk-go-v2/service/sqs" {
				return dep.Path + "@" + dep.Version
			}
		}
	}
	return "unknown"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sqs-go:", err)
	os.Exit(1)
}
