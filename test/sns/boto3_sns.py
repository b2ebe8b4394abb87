# boto3's SNS client (Query protocol) against the broker: the script test/sns/sns-sdk.test.ts runs.
# It prints one JSON line of what it saw; the test checks that line and the queue's contents.
import json
import os
import sys

import boto3
import botocore.exceptions

endpoint, key, secret, queue_arn = sys.argv[1:5]
sns = boto3.client(
    "sns",
    endpoint_url=endpoint,
    region_name="us-east-1",
    aws_access_key_id=key,
    aws_secret_access_key=secret,
)
topic = sns.create_topic(Name="boto3-topic", Tags=[{"Key": "made-by", "Value": "boto3"}])["TopicArn"]
sub = sns.subscribe(
    TopicArn=topic,
    Protocol="sqs",
    Endpoint=queue_arn,
    Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": [{"prefix": "keep"}]})},
)["SubscriptionArn"]
kept = sns.publish(
    TopicArn=topic,
    Message="from boto3",
    MessageAttributes={"kind": {"DataType": "String", "StringValue": "keep-me"}},
)["MessageId"]
sns.publish(TopicArn=topic, Message="dropped", MessageAttributes={"kind": {"DataType": "String", "StringValue": "drop"}})
batch = sns.publish_batch(
    TopicArn=topic,
    PublishBatchRequestEntries=[
        {"Id": "one", "Message": "batch one", "MessageAttributes": {"kind": {"DataType": "String", "StringValue": "keep-1"}}},
        {"Id": "two", "Message": "batch two", "MessageAttributes": {"kind": {"DataType": "String", "StringValue": "nope"}}},
    ],
)
errors = {}
try:
    sns.get_topic_attributes(TopicArn=topic + "-missing")
except sns.exceptions.NotFoundException as e:
    errors["missing"] = [e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]]
try:
    sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="a@example.com")
except sns.exceptions.InvalidParameterException as e:
    errors["email"] = e.response["Error"]["Code"]
try:
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue='{"a": {"b": ["c"]}}')
except sns.exceptions.InvalidParameterException as e:
    errors["nested"] = e.response["Error"]["Message"]
print(
    json.dumps(
        {
            "topics": [t["TopicArn"] for t in sns.list_topics()["Topics"]],
            "subscription": sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"],
            "tags": sns.list_tags_for_resource(ResourceArn=topic)["Tags"],
            "kept": kept,
            "batch": [s["Id"] for s in batch["Successful"]],
            "errors": errors,
        }
    )
)
