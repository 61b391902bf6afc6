// Serves the SQS calls of test/sqs-conformance.test.ts with the AWS SDK for Java v1: settings as the
// first JSON line on stdin, then one call a line ({"id", "operation", "params"} with AWS JSON names),
// each answered as one JSON line {"id", "ok": answer}, {"id", "error": code} or {"id", "failed": why}.
// Calls run at once as they come, so the test's "at once" steps reach the door together. No retries:
// a refusal answers as itself. The SDK speaks AWS JSON 1.0 and posts a call that names a queue to the
// queue's URL, QueueUrl still in the body.
package bus.conformance;

import com.amazonaws.AmazonServiceException;
import com.amazonaws.ClientConfiguration;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.internal.SdkInternalList;
import com.amazonaws.internal.SdkInternalMap;
import com.amazonaws.protocol.json.SdkJsonProtocolFactory;
import com.amazonaws.retry.PredefinedRetryPolicies;
import com.amazonaws.services.sqs.AmazonSQS;
import com.amazonaws.services.sqs.AmazonSQSClient;
import com.amazonaws.services.sqs.AmazonSQSClientBuilder;
import com.amazonaws.services.sqs.model.AmazonSQSException;
import com.amazonaws.services.sqs.model.BatchResultErrorEntry;
import com.amazonaws.services.sqs.model.ChangeMessageVisibilityBatchRequest;
import com.amazonaws.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import com.amazonaws.services.sqs.model.ChangeMessageVisibilityBatchResult;
import com.amazonaws.services.sqs.model.ChangeMessageVisibilityBatchResultEntry;
import com.amazonaws.services.sqs.model.ChangeMessageVisibilityRequest;
import com.amazonaws.services.sqs.model.DeleteMessageBatchRequest;
import com.amazonaws.services.sqs.model.DeleteMessageBatchRequestEntry;
import com.amazonaws.services.sqs.model.DeleteMessageBatchResult;
import com.amazonaws.services.sqs.model.DeleteMessageBatchResultEntry;
import com.amazonaws.services.sqs.model.DeleteMessageRequest;
import com.amazonaws.services.sqs.model.GetQueueAttributesRequest;
import com.amazonaws.services.sqs.model.GetQueueUrlRequest;
import com.amazonaws.services.sqs.model.Message;
import com.amazonaws.services.sqs.model.MessageAttributeValue;
import com.amazonaws.services.sqs.model.PurgeQueueRequest;
import com.amazonaws.services.sqs.model.ReceiveMessageRequest;
import com.amazonaws.services.sqs.model.ReceiveMessageResult;
import com.amazonaws.util.VersionInfoUtils;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

public final class SqsJava {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

  private SqsJava() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String first = in.readLine();
    if (first == null) {
      fail("no settings line");
    }
    JsonNode settings = JSON.readTree(first);
    AmazonSQS client = AmazonSQSClientBuilder.standard()
        .withEndpointConfiguration(new EndpointConfiguration(settings.path("endpoint").asText(), settings.path("region").asText()))
        .withCredentials(new AWSStaticCredentialsProvider(
            new BasicAWSCredentials(settings.path("accessKeyId").asText(), settings.path("secretAccessKey").asText())))
        .withClientConfiguration(new ClientConfiguration()
            .withRetryPolicy(PredefinedRetryPolicies.NO_RETRY_POLICY)
            .withMaxErrorRetry(0)
            .withConnectionTimeout(10_000)
            // Past the longest long poll (20 s).
            .withSocketTimeout(30_000))
        .build();
    Map<String, Function<Params, Object>> operations = operations(client);

    ObjectNode hello = JSON.createObjectNode();
    hello.put("sdk", VersionInfoUtils.getVersion());
    hello.put("protocol", protocol());
    write(hello);

    ExecutorService calls = Executors.newCachedThreadPool();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      JsonNode request = JSON.readTree(line);
      int id = request.path("id").asInt();
      String name = request.path("operation").asText();
      Function<Params, Object> operation = operations.get(name);
      if (operation == null) {
        fail("operation \"" + name + "\" is not driven");
      }
      JsonNode params = request.path("params");
      calls.execute(() -> write(answer(id, operation, params)));
    }
    calls.shutdown();
    calls.awaitTermination(5, TimeUnit.MINUTES);
    client.shutdown();
    System.exit(0);
  }

  private static ObjectNode answer(int id, Function<Params, Object> operation, JsonNode params) {
    ObjectNode answer = JSON.createObjectNode();
    answer.put("id", id);
    try {
      Params input = new Params(params);
      Object result = operation.apply(input);
      answer.set("ok", JSON.valueToTree(result));
    } catch (AmazonServiceException err) {
      answer.put("error", errorCode(err));
    } catch (RuntimeException err) {
      // Not an answer of the door (a transport, checksum or decoding failure): the test fails on it, with the reason.
      answer.put("failed", err.getClass().getSimpleName() + ": " + err.getMessage());
    }
    return answer;
  }

  /** The modelled exception's name (QueueDoesNotExistException is QueueDoesNotExist), else the error code the SDK read. */
  private static String errorCode(AmazonServiceException err) {
    String name = err.getClass().getSimpleName();
    boolean modelled = err instanceof AmazonSQSException && err.getClass() != AmazonSQSException.class && name.endsWith("Exception");
    return modelled ? name.substring(0, name.length() - "Exception".length()) : err.getErrorCode();
  }

  /** The wire protocol this SDK speaks to SQS: AWS JSON 1.0 where the client has a JSON protocol factory, the query protocol before. */
  private static String protocol() {
    try {
      Class<?> factory = AmazonSQSClient.class.getDeclaredField("protocolFactory").getType();
      return SdkJsonProtocolFactory.class.isAssignableFrom(factory) ? "json" : "query";
    } catch (NoSuchFieldException none) {
      return "query";
    }
  }

  // ReceiveMessage's AttributeNames is deprecated (for MessageSystemAttributeNames) but still sent, as the test sends it.
  @SuppressWarnings("deprecation")
  private static Map<String, Function<Params, Object>> operations(AmazonSQS client) {
    return Map.of(
        "GetQueueUrl", p -> {
          GetQueueUrlRequest request = new GetQueueUrlRequest()
              .withQueueName(p.string("QueueName"))
              .withQueueOwnerAWSAccountId(p.string("QueueOwnerAWSAccountId"));
          p.done();
          return shape().with("QueueUrl", client.getQueueUrl(request).getQueueUrl());
        },
        "GetQueueAttributes", p -> {
          GetQueueAttributesRequest request = new GetQueueAttributesRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withAttributeNames(p.strings("AttributeNames"));
          p.done();
          return shape().with("Attributes", client.getQueueAttributes(request).getAttributes());
        },
        "ReceiveMessage", p -> {
          ReceiveMessageRequest request = new ReceiveMessageRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withAttributeNames(p.strings("AttributeNames"))
              .withMessageSystemAttributeNames(p.strings("MessageSystemAttributeNames"))
              .withMessageAttributeNames(p.strings("MessageAttributeNames"))
              .withMaxNumberOfMessages(p.integer("MaxNumberOfMessages"))
              .withVisibilityTimeout(p.integer("VisibilityTimeout"))
              .withWaitTimeSeconds(p.integer("WaitTimeSeconds"))
              .withReceiveRequestAttemptId(p.string("ReceiveRequestAttemptId"));
          p.done();
          ReceiveMessageResult result = client.receiveMessage(request);
          return shape().with("Messages", present(result.getMessages()) ? map(result.getMessages(), SqsJava::message) : null);
        },
        "DeleteMessage", p -> {
          DeleteMessageRequest request = new DeleteMessageRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withReceiptHandle(p.string("ReceiptHandle"));
          p.done();
          client.deleteMessage(request);
          return shape();
        },
        "DeleteMessageBatch", p -> {
          DeleteMessageBatchRequest request = new DeleteMessageBatchRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withEntries(p.entries("Entries", e -> new DeleteMessageBatchRequestEntry()
                  .withId(e.string("Id"))
                  .withReceiptHandle(e.string("ReceiptHandle"))));
          p.done();
          DeleteMessageBatchResult result = client.deleteMessageBatch(request);
          return batch(result.getSuccessful(), DeleteMessageBatchResultEntry::getId, result.getFailed());
        },
        "ChangeMessageVisibility", p -> {
          ChangeMessageVisibilityRequest request = new ChangeMessageVisibilityRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withReceiptHandle(p.string("ReceiptHandle"))
              .withVisibilityTimeout(p.integer("VisibilityTimeout"));
          p.done();
          client.changeMessageVisibility(request);
          return shape();
        },
        "ChangeMessageVisibilityBatch", p -> {
          ChangeMessageVisibilityBatchRequest request = new ChangeMessageVisibilityBatchRequest()
              .withQueueUrl(p.string("QueueUrl"))
              .withEntries(p.entries("Entries", e -> new ChangeMessageVisibilityBatchRequestEntry()
                  .withId(e.string("Id"))
                  .withReceiptHandle(e.string("ReceiptHandle"))
                  .withVisibilityTimeout(e.integer("VisibilityTimeout"))));
          p.done();
          ChangeMessageVisibilityBatchResult result = client.changeMessageVisibilityBatch(request);
          return batch(result.getSuccessful(), ChangeMessageVisibilityBatchResultEntry::getId, result.getFailed());
        },
        "PurgeQueue", p -> {
          PurgeQueueRequest request = new PurgeQueueRequest().withQueueUrl(p.string("QueueUrl"));
          p.done();
          client.purgeQueue(request);
          return shape();
        });
  }

  private static Shape message(Message m) {
    return shape()
        .with("MessageId", m.getMessageId())
        .with("ReceiptHandle", m.getReceiptHandle())
        .with("MD5OfBody", m.getMD5OfBody())
        .with("Body", m.getBody())
        .with("Attributes", m.getAttributes())
        .with("MD5OfMessageAttributes", m.getMD5OfMessageAttributes())
        .with("MessageAttributes", present(m.getMessageAttributes()) ? mapValues(m.getMessageAttributes(), SqsJava::attribute) : null);
  }

  private static Shape attribute(MessageAttributeValue value) {
    return shape()
        .with("StringValue", value.getStringValue())
        .with("BinaryValue", value.getBinaryValue() == null ? null : base64(value.getBinaryValue()))
        .with("StringListValues", value.getStringListValues())
        .with("BinaryListValues", present(value.getBinaryListValues()) ? map(value.getBinaryListValues(), SqsJava::base64) : null)
        .with("DataType", value.getDataType());
  }

  private static <T> Shape batch(List<T> successful, Function<T, String> id, List<BatchResultErrorEntry> failed) {
    return shape()
        .with("Successful", present(successful) ? map(successful, entry -> shape().with("Id", id.apply(entry))) : null)
        .with("Failed", present(failed) ? map(failed, entry -> shape()
            .with("Id", entry.getId())
            .with("SenderFault", entry.getSenderFault())
            .with("Code", entry.getCode())
            .with("Message", entry.getMessage())) : null);
  }

  private static String base64(ByteBuffer bytes) {
    ByteBuffer unread = bytes.duplicate();
    byte[] out = new byte[unread.remaining()];
    unread.get(out);
    return Base64.getEncoder().encodeToString(out);
  }

  private static <T, R> List<R> map(List<T> items, Function<T, R> each) {
    List<R> out = new ArrayList<>();
    for (T item : items) {
      out.add(each.apply(item));
    }
    return out;
  }

  private static <T, R> Map<String, R> mapValues(Map<String, T> items, Function<T, R> each) {
    Map<String, R> out = new LinkedHashMap<>();
    items.forEach((key, value) -> out.put(key, each.apply(value)));
    return out;
  }

  /** Whether a list or map member was in the answer: the SDK's getters make an empty one up ("auto-construct") where it was not. */
  private static boolean present(Object member) {
    if (member instanceof SdkInternalList<?> list) {
      return !list.isAutoConstruct();
    }
    if (member instanceof SdkInternalMap<?, ?> map) {
      return !map.isAutoConstruct();
    }
    return member != null;
  }

  private static Shape shape() {
    return new Shape();
  }

  /** An answer as AWS JSON: its members by their AWS JSON names, absent ones left out. */
  static final class Shape extends LinkedHashMap<String, Object> {
    private static final long serialVersionUID = 1L;

    Shape with(String name, Object member) {
      if (present(member)) {
        put(name, member);
      }
      return this;
    }
  }

  /** A call's AWS JSON parameters, read by name; a member the driver does not read fails the call, as an unknown field fails sqs-go's. */
  static final class Params {
    private final JsonNode node;
    private final Set<String> read = new HashSet<>();

    Params(JsonNode node) {
      if (!node.isObject()) {
        throw new IllegalArgumentException("params: not an object: " + node);
      }
      this.node = node;
    }

    private JsonNode member(String name) {
      read.add(name);
      JsonNode value = node.get(name);
      return value == null || value.isNull() ? null : value;
    }

    String string(String name) {
      JsonNode value = member(name);
      if (value != null && !value.isTextual()) {
        throw new IllegalArgumentException("params: " + name + " is not a string");
      }
      return value == null ? null : value.asText();
    }

    Integer integer(String name) {
      JsonNode value = member(name);
      if (value != null && !value.canConvertToInt()) {
        throw new IllegalArgumentException("params: " + name + " is not an integer");
      }
      return value == null ? null : value.asInt();
    }

    List<String> strings(String name) {
      JsonNode value = member(name);
      if (value == null) {
        return null;
      }
      List<String> out = new ArrayList<>();
      for (JsonNode item : array(name, value)) {
        if (!item.isTextual()) {
          throw new IllegalArgumentException("params: " + name + " holds a non-string");
        }
        out.add(item.asText());
      }
      return out;
    }

    <T> List<T> entries(String name, Function<Params, T> entry) {
      JsonNode value = member(name);
      if (value == null) {
        return null;
      }
      List<T> out = new ArrayList<>();
      for (JsonNode item : array(name, value)) {
        Params fields = new Params(item);
        out.add(entry.apply(fields));
        fields.done();
      }
      return out;
    }

    private static ArrayNode array(String name, JsonNode value) {
      if (!value.isArray()) {
        throw new IllegalArgumentException("params: " + name + " is not a list");
      }
      return (ArrayNode) value;
    }

    /** Every member was read. */
    void done() {
      for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        if (!read.contains(name)) {
          throw new IllegalArgumentException("params: unknown member " + name);
        }
      }
    }
  }

  private static void write(JsonNode line) {
    String text;
    try {
      text = JSON.writeValueAsString(line);
    } catch (Exception err) {
      fail(err.toString());
      return;
    }
    synchronized (OUT) {
      OUT.println(text);
      OUT.flush();
    }
  }

  private static void fail(String why) {
    System.err.println("sqs-java: " + why);
    System.exit(1);
  }
}
