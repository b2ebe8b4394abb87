"""boto3 against the broker's SQS endpoint: the JSON protocol through boto3's own client, and the
Query protocol (which boto3's SQS client no longer speaks) as botocore signs it: a header-signed
form POST and a presigned GET (botocore signs those with UNSIGNED-PAYLOAD).

Usage: python3 boto3_sqs.py <endpoint> <access key id> <secret>. Prints OK or raises."""
import sys
import urllib.request

import boto3
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

endpoint, key, secret = sys.argv[1:4]
region = "eu-west-3"
sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region, aws_access_key_id=key, aws_secret_access_key=secret)

# JSON protocol, through boto3's client (which checks the MD5 digests).
url = sqs.create_queue(QueueName="boto3-q", Attributes={"VisibilityTimeout": "5"})["QueueUrl"]
sent = sqs.send_message(QueueUrl=url, MessageBody="from boto3", MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
batch = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "one"}, {"Id": "b", "MessageBody": "two"}])
assert sorted(e["Id"] for e in batch["Successful"]) == ["a", "b"], batch
got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageAttributeNames=["All"])["Messages"]
assert sorted(m["Body"] for m in got) == ["from boto3", "one", "two"], got
assert [m for m in got if m["MessageId"] == sent["MessageId"]][0]["MessageAttributes"]["k"]["StringValue"] == "v"
deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)])
assert len(deleted["Successful"]) == 3, deleted
attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
assert attrs["ApproximateNumberOfMessages"] == "0" and attrs["ApproximateNumberOfMessagesNotVisible"] == "0", attrs
try:
    sqs.get_queue_url(QueueName="no-such-queue")
    raise AssertionError("an unknown queue was found")
except sqs.exceptions.QueueDoesNotExist:
    pass

# Query protocol, signed by botocore: a form POST to the queue URL, then a presigned GET.
credentials = Credentials(key, secret)


def query(body):
    request = AWSRequest(method="POST", url=url, data=body.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(credentials, "sqs", region).add_auth(request)
    prepared = request.prepare()
    with urllib.request.urlopen(urllib.request.Request(prepared.url, data=prepared.body, headers=dict(prepared.headers), method="POST")) as answer:
        return answer.read().decode()


xml = query("Action=SendMessage&Version=2012-11-05&MessageBody=over%20query")
assert "<MD5OfMessageBody>" in xml, xml
xml = query("Action=ReceiveMessage&Version=2012-11-05&WaitTimeSeconds=1")
assert "<Body>over query</Body>" in xml, xml

presign = AWSRequest(method="GET", url=endpoint + "/?Action=ListQueues&Version=2012-11-05")
SigV4QueryAuth(credentials, "sqs", region, expires=60).add_auth(presign)
with urllib.request.urlopen(presign.prepare().url) as answer:
    listed = answer.read().decode()
assert "<QueueUrl>" + url + "</QueueUrl>" in listed, listed
print("OK")
