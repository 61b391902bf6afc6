// Reads a consumer connection's queue with the AWS SDK for SQS, as a verified AWS principal of that
// connection (docs/auth.md, "The SQS door"): receives, prints and deletes (acks) messages.
//
//   node examples/sqs-receive.mjs [count]     # until `count` messages (default 1) are received and deleted
//
// Prints one JSON line per message: its message_id, correlation_id, receive_count and body (the
// producer's exact bytes, as a string). Exits 1 if a 20 s long poll brings nothing.
// Environment: BUS_BASE_URL, BUS_CONSUMER_CLIENT_ID (the connection: its queue's name),
// BUS_ACCESS_KEY_ID, BUS_SECRET_ACCESS_KEY (a verified principal of it), AWS_REGION (default us-east-1).
import { DeleteMessageCommand, GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { requiredEnv } from './env.mjs';

const env = requiredEnv('sqs-receive', ['BUS_BASE_URL', 'BUS_CONSUMER_CLIENT_ID', 'BUS_ACCESS_KEY_ID', 'BUS_SECRET_ACCESS_KEY']);
const wanted = Number(process.argv[2] ?? 1);
if (!Number.isInteger(wanted) || wanted < 1) {
  process.stderr.write('usage: sqs-receive.mjs [count ≥ 1]\n');
  process.exit(2);
}

const sqs = new SQSClient({
  endpoint: `${env.BUS_BASE_URL}/v1/sqs`, // the bus, never AWS
  region: process.env.AWS_REGION || 'us-east-1', // the bus's AWS_SIGV4_REGION
  credentials: { accessKeyId: env.BUS_ACCESS_KEY_ID, secretAccessKey: env.BUS_SECRET_ACCESS_KEY },
});

async function receive() {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: env.BUS_CONSUMER_CLIENT_ID }));
  for (let received = 0; received < wanted;) {
    // Never more than still wanted: a message received and not deleted would come back only when its lease (30 s) ends.
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: Math.min(10, wanted - received), WaitTimeSeconds: 20, MessageSystemAttributeNames: ['All'] }),
    );
    if (Messages.length === 0) throw new Error(`nothing received within 20 s (${received} of ${wanted})`);
    for (const { Attributes: a = {}, Body, ReceiptHandle } of Messages) {
      const line = { message_id: a.MessageDeduplicationId, correlation_id: a.MessageGroupId, receive_count: Number(a.ApproximateReceiveCount), body: Body };
      process.stdout.write(`${JSON.stringify(line)}\n`);
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle })); // the ack
      received += 1;
    }
  }
}

await receive().catch((err) => {
  process.stderr.write(`sqs-receive: ${err.name}: ${err.message}\n`);
  process.exitCode = 1;
});
