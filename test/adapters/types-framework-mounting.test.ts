// Type-level proof that each adapter mounts, without a cast, where the frameworks' own types put it (checked by tsc).
import http from 'node:http';
import http2 from 'node:http2';
import express, { type NextFunction, type Request, type Response } from 'express';
import Fastify, { type FastifyPluginAsync, type FastifyTypeProvider } from 'fastify';
import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { describe, expectTypeOf, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createNodeHandler } from 'workforce-webhooks/node';

// A type provider of the kind @fastify/type-provider-typebox and json-schema-to-ts give.
interface SchemaProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends { readonly type: 'object' } ? Record<string, unknown> : unknown;
  readonly serializer: unknown;
}

const receiver = createReceiver({ secret: 'whsec_types' });

describe('adapters against the frameworks types', () => {
  it('mounts the Express middleware on an app, a Router, a strict Router and after typed locals', () => {
    const app = express();
    app.post('/webhooks/workforce', createExpressMiddleware(receiver));
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    const router = express.Router();
    router.post('/workforce', createExpressMiddleware(receiver));
    const strict = express.Router({ strict: true });
    strict.all('/workforce', createExpressMiddleware(receiver));
    app.use('/webhooks', router, strict);
    const tagged = (_req: Request, res: Response<unknown, { tenant: string }>, next: NextFunction): void => {
      res.locals.tenant = 'acme';
      next();
    };
    app.use('/webhooks/workforce', tagged, createExpressMiddleware(receiver));
    app.post('/webhooks/:tenant', tagged, createExpressMiddleware(receiver));
    expectTypeOf(createExpressMiddleware(receiver)).toBeFunction();
  });

  it('mounts the Hono handler with typed bindings, on a routed sub-app and after createMiddleware', () => {
    type Bindings = { readonly WORKFORCE_SECRET: string };
    const app = new Hono<{ Bindings: Bindings }>();
    app.post('/webhooks/workforce', createHonoHandler(receiver));
    app.all('/webhooks/workforce', (c) => {
      expectTypeOf(c.env.WORKFORCE_SECRET).toEqualTypeOf<string>();
      void c.executionCtx;
      return createHonoHandler(receiver)(c);
    });
    const hooks = new Hono<{ Bindings: Bindings; Variables: { tenant: string } }>();
    const tenant = createMiddleware<{ Variables: { tenant: string } }>(async (c, next) => {
      c.set('tenant', 'acme');
      await next();
    });
    hooks.post('/workforce', tenant, createHonoHandler(receiver));
    app.route('/webhooks', hooks);
    expectTypeOf(createHonoHandler(receiver)).returns.resolves.toEqualTypeOf<globalThis.Response>();
  });

  it('registers the Fastify plugin with and without options, typed, encapsulated and awaited', async () => {
    const fastify = Fastify();
    await fastify.register(createFastifyPlugin(receiver));
    await fastify.register(createFastifyPlugin(receiver, { path: '/one' }));
    await fastify.register(createFastifyPlugin(receiver), { path: '/two' });
    await fastify.register(createFastifyPlugin(receiver), { prefix: '/three' });
    // @ts-expect-error a typo of `path`
    createFastifyPlugin(receiver, { pth: '/hooks' });
    // @ts-expect-error a typo of `path`, given to register
    void Fastify().register(createFastifyPlugin(receiver), { pth: '/hooks' });
    // @ts-expect-error a path is a string
    void Fastify().register(createFastifyPlugin(receiver), { path: 4 });
    const typed = Fastify().withTypeProvider<SchemaProvider>();
    await typed.register(createFastifyPlugin(receiver));
    const encapsulated: FastifyPluginAsync = async (scope) => {
      await scope.register(createFastifyPlugin(receiver, { path: '/workforce' }));
    };
    void Fastify({ http2: true }).register(createFastifyPlugin(receiver), { path: '/h2' });
    void Fastify({ http2: true, https: { allowHTTP1: true } }).register(createFastifyPlugin(receiver));
    void Fastify({ logger: { level: 'warn' } }).register(createFastifyPlugin(receiver));
    const other = Fastify();
    other.register(encapsulated, { prefix: '/webhooks' });
    await other.ready();
    await typed.close();
    await other.close();
    await fastify.close();
  });

  it("types the Next handlers as Next's own route and API route types", () => {
    const POST = createNextRouteHandler(receiver);
    expectTypeOf(POST).toEqualTypeOf<(request: globalThis.Request) => Promise<globalThis.Response>>();
    expectTypeOf(createNextApiHandler(receiver)).toBeFunction();
  });

  it('takes a receiver of an own event map in every adapter', () => {
    const own = createReceiver<{ 'payroll.paid': { readonly payrollId: string } }>({ secret: 'whsec_types' });
    express().post('/webhooks/workforce', createExpressMiddleware(own));
    new Hono().post('/webhooks/workforce', createHonoHandler(own));
    void Fastify().register(createFastifyPlugin(own));
    expectTypeOf(createNextRouteHandler(own)).toBeFunction();
    expectTypeOf(createNextApiHandler(own)).toBeFunction();
    http.createServer(createNodeHandler(own));
  });

  it('serves node:http and http2 compat, and is called from an app of its own routing', () => {
    const webhooks = createNodeHandler(receiver);
    http.createServer(webhooks);
    http2.createServer(webhooks);
    http2.createSecureServer({ allowHTTP1: true }, webhooks);
    http.createServer((req, res) => {
      if (req.url === '/webhooks/workforce') return void webhooks(req, res);
      res.writeHead(404).end();
    });
    http2.createServer((req, res) => {
      if (req.url === '/webhooks/workforce') return void webhooks(req, res);
      res.writeHead(404).end();
    });
  });
});
