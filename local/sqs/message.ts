import { createHash } from 'node:crypto';
import { AwsServiceError } from '../aws-http';

/**
 * SQS message rules shared by SendMessage, SendMessageBatch and in-process sends: body characters,
 * message attributes, size and DelaySeconds limits, and the MD5 digests SQS returns (the SDK checks
 * MD5OfMessageBody against what it sent and fails the call on a mismatch).
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */

import { SQS_MAX_MESSAGE_BYTES } from '../../common/limits';

/** MaximumMessageSize of the project's queues, as the CDK stack sets it (1 MiB). */
export const MAX_MESSAGE_BYTES = SQS_MAX_MESSAGE_BYTES;
export const MAX_DELAY_SECONDS = 900;
export const MAX_ATTRIBUTES = 10;
export const MAX_BATCH_ENTRIES = 10;

export interface MessageAttributeValue {
  readonly DataType: string;
  readonly StringValue?: string;
  /** Base64, as the JSON protocol carries blobs. */
  readonly BinaryValue?: string;
}

export type MessageAttributes = Readonly<Record<string, MessageAttributeValue>>;

export interface ValidatedMessage {
  readonly body: string;
  readonly attributes: MessageAttributes;
  readonly delaySeconds: number;
  readonly md5OfBody: string;
  readonly md5OfMessageAttributes: string | undefined;
  /** Body plus attribute names, types and values: what counts against MaximumMessageSize. */
  readonly sizeBytes: number;
}

export const md5Hex = (data: string | Buffer): string => createHash('md5').update(data).digest('hex');

// XML 1.0 characters SQS accepts: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
const INVALID_BODY_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const ATTRIBUTE_NAME = /^(?!aws\.|amazon\.)(?!\.)(?!.*\.\.)[A-Za-z0-9_\-.]{1,256}(?<!\.)$/i;

const invalid = (message: string): AwsServiceError => new AwsServiceError('InvalidParameterValue', message);

const lengthPrefixed = (bytes: Buffer): Buffer => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

/**
 * MD5 of message attributes as SQS computes it: for each attribute sorted by name, the length-prefixed
 * name, the length-prefixed data type, a transport byte (1 string, 2 binary) and the length-prefixed value.
 */
export const md5OfAttributes = (attributes: MessageAttributes): string | undefined => {
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const attribute = attributes[name]!;
    parts.push(
      lengthPrefixed(Buffer.from(name, 'utf8')),
      lengthPrefixed(Buffer.from(attribute.DataType, 'utf8')),
    );
    if (attribute.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]), lengthPrefixed(Buffer.from(attribute.BinaryValue, 'base64')));
    } else {
      parts.push(Buffer.from([1]), lengthPrefixed(Buffer.from(attribute.StringValue ?? '', 'utf8')));
    }
  }
  return md5Hex(Buffer.concat(parts));
};

const validateAttributes = (raw: unknown): { attributes: MessageAttributes; bytes: number } => {
  if (raw === undefined || raw === null) return { attributes: {}, bytes: 0 };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('MessageAttributes must be a map');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_ATTRIBUTES) {
    throw invalid(
      `Number of message attributes [${entries.length}] exceeds the allowed maximum [${MAX_ATTRIBUTES}].`,
    );
  }
  const attributes: Record<string, MessageAttributeValue> = {};
  let bytes = 0;
  for (const [name, value] of entries) {
    if (!ATTRIBUTE_NAME.test(name)) throw invalid(`Message attribute name '${name}' is invalid.`);
    const attribute = (value ?? {}) as Partial<MessageAttributeValue>;
    const dataType = attribute.DataType;
    if (typeof dataType !== 'string' || !/^(String|Number|Binary)(\..+)?$/.test(dataType)) {
      throw invalid(
        `The message attribute '${name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.`,
      );
    }
    if (dataType.startsWith('Binary')) {
      if (typeof attribute.BinaryValue !== 'string') {
        throw invalid(`The message attribute '${name}' with type 'Binary' must use field 'Binary'.`);
      }
      attributes[name] = { DataType: dataType, BinaryValue: attribute.BinaryValue };
      bytes += Buffer.from(attribute.BinaryValue, 'base64').length;
    } else {
      if (typeof attribute.StringValue !== 'string' || attribute.StringValue === '') {
        throw invalid(
          `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${dataType}'.`,
        );
      }
      if (dataType.startsWith('Number') && !Number.isFinite(Number(attribute.StringValue))) {
        throw invalid(`Can't cast the value of message (user) attribute '${name}' to a number.`);
      }
      attributes[name] = { DataType: dataType, StringValue: attribute.StringValue };
      bytes += Buffer.byteLength(attribute.StringValue, 'utf8');
    }
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(dataType, 'utf8');
  }
  return { attributes, bytes };
};

/** Validates one message as SendMessage does; throws the error SQS would answer with. */
export const validateMessage = (input: {
  readonly MessageBody?: unknown;
  readonly DelaySeconds?: unknown;
  readonly MessageAttributes?: unknown;
}): ValidatedMessage => {
  const body = input.MessageBody;
  if (body === undefined || body === null) {
    throw new AwsServiceError('MissingParameter', 'The request must contain the parameter MessageBody.');
  }
  if (typeof body !== 'string' || body.length === 0) {
    throw invalid('The request must contain a non-empty message body.');
  }
  if (INVALID_BODY_CHARACTER.test(body)) {
    throw new AwsServiceError(
      'InvalidMessageContents',
      'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF',
    );
  }
  const delay = input.DelaySeconds ?? 0;
  if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
    throw invalid(
      `Value ${String(delay)} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}, if provided.`,
    );
  }
  const { attributes, bytes } = validateAttributes(input.MessageAttributes);
  const sizeBytes = Buffer.byteLength(body, 'utf8') + bytes;
  if (sizeBytes > MAX_MESSAGE_BYTES) {
    throw invalid(
      `One or more parameters are invalid. Reason: Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`,
    );
  }
  return {
    body,
    attributes,
    delaySeconds: delay,
    md5OfBody: md5Hex(body),
    md5OfMessageAttributes: md5OfAttributes(attributes),
    sizeBytes,
  };
};

/** SQS bills a request per started 64 KiB of payload. */
export const billedRequests = (payloadBytes: number): number => Math.max(1, Math.ceil(payloadBytes / 65_536));
