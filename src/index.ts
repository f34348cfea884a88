// The root entry: the receiver, its parts and types. Imports nothing optional.
export { type BodyResult, readRequestBody } from './body.js';
export { CURRENT_API_VERSION, parseEvent } from './envelope.js';
export {
  ConfigurationError,
  HandlerTimeoutError,
  InvalidPayloadError,
  type VerificationErrorCode,
  WebhookError,
  type WebhookErrorCode,
  WebhookVerificationError,
} from './errors.js';
export { type HeadersInput, headerValue } from './headers.js';
export { createWarnOnce, type Logger, silentLogger } from './logger.js';
export { createMemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export {
  type AttemptContext,
  type Backoff,
  type DeadLetter,
  type EnqueueResult,
  type EventQueue,
  exponentialBackoff,
  HandlerFailure,
  type JobProcessor,
  type QueuedEvent,
  type QueueHooks,
} from './queue.js';
export {
  type BodyProblem,
  createReceiver,
  type FetchPlatform,
  type HandleInput,
  type Receiver,
  type ReceiverOptions,
} from './receiver.js';
export { answers, RETRY_AFTER_SECONDS, type WebhookResponse } from './responses.js';
export {
  type ParsedSignature,
  parseSignatureHeader,
  type Secret,
  type SignOptions,
  signPayload,
  type VerifyOptions,
  verifySignature,
} from './signature.js';
export {
  type ClaimResult,
  createMemoryStore,
  DEFAULT_DONE_TTL_MS,
  type DedupeStore,
  type MemoryStoreOptions,
} from './store.js';
export type {
  AbsenceReportCompletedData,
  ErrorHandler,
  EventDataMap,
  EventName,
  EventOf,
  EventPattern,
  Handler,
  HandlerContext,
  LeaveApprovedData,
  SpecEventDataMap,
  TypesOf,
  UnknownEventData,
  WorkforceEvent,
} from './types.js';
