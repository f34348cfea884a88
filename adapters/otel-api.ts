// The OpenTelemetry API, an optional peer, imported statically: a top-level `await import()` here would make
// `require('workforce-webhooks/otel')` fail in a CommonJS project (ERR_REQUIRE_ASYNC_MODULE). Missing, it is named by
// Node's own error: "Cannot find package '@opentelemetry/api'".
import * as api from '@opentelemetry/api';

export { api };
