// A minimal AsyncLocalStorage context manager (what @opentelemetry/context-async-hooks provides), for span nesting.
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context as contextApi, ROOT_CONTEXT } from '@opentelemetry/api';

class AlsContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(context, () => fn.call(thisArg, ...args));
  }
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const self = this;
    return function (this: unknown, ...args: unknown[]) {
      return self.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/**
 * Registers the context manager globally; returns what unregisters it.
 * @example
 * const unregister = registerContextManager(); afterAll(unregister);
 */
export function registerContextManager(): () => void {
  contextApi.setGlobalContextManager(new AlsContextManager());
  return () => contextApi.disable();
}
