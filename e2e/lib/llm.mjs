// A real language model for the Ask tests: llama.cpp's llama-server with
// SmolLM2-135M-Instruct, as scripts/fetch-llm.sh installs them (make test's
// set-up does). Stopped by `stop()`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';

const dir = process.env.DOCSHELF_LLM_DIR ?? path.join(homedir(), '.cache', 'docshelf', 'llm');

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** @returns {Promise<{url: string, busy: () => Promise<boolean>, stop: () => Promise<void>}>} */
export async function startLlamaServer({ timeoutMs = 90_000 } = {}) {
  const bin = path.join(dir, 'bin', 'llama-server');
  const model = path.join(dir, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
  if (!existsSync(bin) || !existsSync(model)) {
    throw new Error(`no llama-server or model in ${dir}: run scripts/fetch-llm.sh (make test's set-up does)`);
  }
  const port = await freePort();
  const child = spawn(
    bin,
    ['--model', model, '--host', '127.0.0.1', '--port', String(port),
      '--ctx-size', '8192', '--parallel', '1', '--threads', '2', '--jinja'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c) => { output += c; });
  child.stderr.on('data', (c) => { output += c; });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`llama-server not ready in ${timeoutMs} ms:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    /** Whether the model is generating now (llama-server's /slots). */
    async busy() {
      const slots = await (await fetch(`${url}/slots`)).json();
      return slots.some((s) => s.is_processing);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
