// The root entry: the receiver, its parts and types. Imports nothing optional.
export { type BodyResult, readRequestBody } from './body.js';
export {
  type BulkOptions,
  type BulkProgress,
  discardDeadLetters,
  type ReplayResult,
  replayDeadLetters,
} from './dead-letter-bulk.js';
export {
  DEFAULT_DEAD_LETTER_LIMIT,
  type DeadLetterEvent,
  type DeadLetterPattern,
  type DeadLetterType,
  errorClassOf,
  MAX_DEAD_LETTER_LIMIT,
} from './dead-letters.js';
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
export {
  type ConsoleLoggerOptions,
  createConsoleLogger,
  createWarnOnce,
  type Logger,
  silentLogger,
} from './logger.js';
export { createMemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export type { OrderingOptions } from './ordering.js';
export { byDefaultKeys, type OrderingKey, type OrderingKeyRules } from './ordering-keys.js';
export type { OrderingMark } from './ordering-mark.js';
export type { KeyEntry, OrderingStore } from './ordering-store.js';
export { OrderingWait } from './ordering-wait.js';
export {
  type AttemptContext,
  type AttemptWatcher,
  type Backoff,
  type DeadLetter,
  type DeadLetterFilter,
  type DeadLetterPage,
  type DeadLetterQuery,
  type DeadLetterTime,
  type DiscardOptions,
  type EnqueueResult,
  type EventQueue,
  exponentialBackoff,
  HandlerFailure,
  type JobProcessor,
  type QueuedEvent,
  type QueueHooks,
  type ReplayOptions,
  type ReplayPlatform,
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
export type { SecretOption } from './secret-source.js';
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
  AttemptObserver,
  DeliveryAnswer,
  DeliveryObserver,
  DeliveryOutcome,
  QueueCounts,
  Telemetry,
  TraceLink,
} from './telemetry.js';
export { outcomeOf } from './telemetry-delivery.js';
export type { EventTransaction, HandlerTransaction } from './transaction.js';
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
  UnknownEventType,
  WorkforceEvent,
} from './types.js';
export { unknownType } from './unknown-type.js';
