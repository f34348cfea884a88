#!/usr/bin/env node
// The `workforce-webhooks` command: sign, send, check, mock, migrate, dead-letters.
import { processIo } from './io.js';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
