// Installs the AsyncLocalStorage Next's server installs before its modules load, so that the real `after()` finds its scope.
import { AsyncLocalStorage } from 'node:async_hooks';

(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
