// Starts a real docshelf server for a test: a free port, a fresh temporary
// store, the real binary. Stops it (and removes the store) afterwards.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The docshelf binary under test: $DOCSHELF_BIN, else the dev build. */
export function binaryPath() {
  if (process.env.DOCSHELF_BIN) return process.env.DOCSHELF_BIN;
  const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(repoRoot, 'target');
  return path.join(targetDir, 'debug', 'docshelf');
}

/**
 * Starts `docshelf serve` (with extra `args`) and resolves once it listens.
 * @returns {Promise<{url: string, dataDir: string, logs: () => string, stop: () => Promise<void>}>}
 */
export async function startServer({ timeoutMs = 120_000, env = {}, args = [] } = {}) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'docshelf-e2e-'));
  const child = spawn(
    binaryPath(),
    ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`docshelf did not start within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${binaryPath()}: ${err.message}`));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`docshelf exited with ${code} before listening:\n${output}`));
    });
  });
  child.removeAllListeners('exit');

  return {
    url,
    dataDir,
    logs: () => output,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Uploads files through the REST API and waits for the job to finish.
 * @param {string} url the server
 * @param {{library: string, version: string, files: {name: string, text: string|Uint8Array}[], token?: string}} upload
 * @returns {Promise<object>} the finished job's status
 */
export async function uploadAndWait(url, { library, version, files, token }) {
  const form = new FormData();
  form.set('library', library);
  form.set('version', version);
  for (const f of files) form.append('file', new Blob([f.text]), f.name);
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(`${url}/api/upload`, { method: 'POST', body: form, headers });
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  const { job_id: id } = await res.json();
  for (;;) {
    const job = await (await fetch(`${url}/api/jobs/${id}`, { headers })).json();
    // A job ends done, interrupted (its server died) or cancelled (its version was deleted).
    if (['done', 'interrupted', 'cancelled'].includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 200));
  }
}
