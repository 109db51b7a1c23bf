// MCP, driven by the official TypeScript SDK client (a client docshelf did
// not write) over both transports: streamable HTTP at /mcp on a running
// server, and stdio through `docshelf mcp` on the same store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { binaryPath, repoRoot, startServer, uploadAndWait } from '../lib/server.mjs';

let server;

before(async () => {
  server = await startServer();
  const job = await uploadAndWait(server.url, {
    library: 'gardening',
    version: '1.0',
    files: [
      { name: 'roses.md', text: '# Roses\n\nPrune roses in late winter, just above an outward-facing bud.\n' },
      {
        name: 'compost.md',
        text: '# Compost\n\nA compost heap turns kitchen scraps into humus within a year.\n\n## Greens and browns\n\nMix green kitchen scraps with brown leaves, about one part to three.\n\n## Turning\n\nTurn the heap every two weeks to let air in.\n\n## Using it\n\nSpread finished compost on beds in autumn, a few centimetres deep, and let worms carry it down over winter; dig nothing in, since digging breaks the soil\'s structure and buries the life that lives near the surface.\n',
      },
      { name: 'tomatoes.md', text: '# Tomatoes\n\nTomato plants need full sun and deep watering.\n' },
    ],
  });
  assert.equal(job.error ?? null, null);
  await uploadAndWait(server.url, {
    library: 'nextjs',
    version: '14.0',
    files: [
      { name: 'routing.md', text: '# Routing\n\nThe app router maps folders to URL segments; page.tsx makes a route public.\n' },
      { name: 'tomato-demo.md', text: '# Tomato demo\n\nThe tomato demo app shows pictures of tomatoes using image optimisation.\n' },
    ],
  });
});

after(async () => {
  await server?.stop();
});

/** Structured content of a successful tool call. */
function ok(result) {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent;
}

function errorText(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  return result.content.map((c) => c.text).join('\n');
}

const transports = {
  'streamable HTTP': () => new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)),
  stdio: () =>
    new StdioClientTransport({
      command: binaryPath(),
      args: ['mcp', '--data', server.dataDir],
      env: { ...process.env, NO_COLOR: '1' },
      cwd: repoRoot,
      stderr: 'ignore',
    }),
};

for (const [name, makeTransport] of Object.entries(transports)) {
  describe(`MCP over ${name}`, () => {
    let client;

    before(async () => {
      client = new Client({ name: 'docshelf-e2e', version: '1.0.0' });
      await client.connect(makeTransport());
    });

    after(async () => {
      await client?.close();
    });

    test('lists the seven tools with schemas and descriptions', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['add_docs', 'compare_versions', 'get_document', 'list_credentials', 'list_libraries', 'resolve_library', 'search_docs']);
      for (const t of tools) {
        assert.ok(t.description.length > 40, `${t.name} needs a description`);
        assert.equal(t.inputSchema.type, 'object');
      }
      const search = tools.find((t) => t.name === 'search_docs');
      // A query in words, or the client's own query vector: neither is
      // required alone (the server says so when both are missing).
      assert.ok(search.inputSchema.properties.query.description);
      assert.ok(search.inputSchema.properties.embedding.description);
      assert.ok(search.inputSchema.properties.library);
      // The REST API's parameters, every one, from the same type.
      const openapi = await (await fetch(`${server.url}/api/openapi.json`)).json();
      const restParams = Object.keys(openapi.components.schemas.SearchParams.properties).sort();
      assert.deepEqual(Object.keys(search.inputSchema.properties).sort(), restParams);
      for (const name of ['w_rec', 'w_sig', 'fusion', 'file_path']) {
        assert.ok(search.inputSchema.properties[name].description, `${name} is described`);
      }
    });

    test('list_libraries and resolve_library answer from the store', async () => {
      const { libraries } = ok(await client.callTool({ name: 'list_libraries', arguments: {} }));
      const rest = await (await fetch(`${server.url}/api/libraries`)).json();
      assert.deepEqual(libraries, rest);
      assert.deepEqual(libraries.map((l) => l.name), ['gardening', 'nextjs']);

      const resolved = ok(await client.callTool({ name: 'resolve_library', arguments: { name: 'Next.js' } }));
      assert.equal(resolved.library, 'nextjs');
      const unknown = await client.callTool({ name: 'resolve_library', arguments: { name: 'kubernetes' } });
      assert.equal(unknown.isError, true);
      assert.ok(unknown.structuredContent.candidates.includes('gardening'));
    });

    test('search_docs finds passages, keeps the library sticky, and groups mixed answers', async () => {
      const first = ok(await client.callTool({ name: 'search_docs', arguments: { query: 'when to prune roses' } }));
      assert.equal(first.results[0].file_path, 'roses.md');
      assert.equal(first.results[0].library, 'gardening');
      assert.equal(typeof first.results[0].chunk_index, 'number');

      // Tomatoes live in both libraries: the answer names both.
      const mixed = ok(await client.callTool({ name: 'search_docs', arguments: { query: 'tomato' } }));
      // Best first: either library's page may lead, both are about tomatoes.
      assert.deepEqual([...mixed.libraries_found].sort(), ['gardening', 'nextjs']);
      assert.match(mixed.notice, new RegExp(`Found in ${mixed.libraries_found[0]} and ${mixed.libraries_found[1]}`));
      assert.deepEqual(mixed.results.slice(0, 2).map((r) => r.library), mixed.libraries_found);

      // Naming a library (loosely) makes it sticky for this session.
      const named = ok(await client.callTool({ name: 'search_docs', arguments: { query: 'tomato', library: 'NextJS' } }));
      assert.equal(named.library, 'nextjs');
      assert.ok(named.results.every((r) => r.library === 'nextjs'));
      const followUp = ok(
        await client.callTool({
          name: 'search_docs',
          arguments: { query: 'tomato', session_id: named.session_id },
        }),
      );
      assert.equal(followUp.sticky_applied, true);
      assert.ok(followUp.results.every((r) => r.library === 'nextjs'));
      const cleared = ok(
        await client.callTool({
          name: 'search_docs',
          arguments: { query: 'tomato', session_id: named.session_id, clear_library: true },
        }),
      );
      assert.equal(cleared.sticky_applied, false);
      assert.equal(cleared.libraries_found.length, 2);
    });

    test('search_docs with max_tokens gives the budgeted context alone, as REST does', async () => {
      const args = { query: 'compost kitchen scraps', library: 'gardening', max_tokens: 400 };
      const result = await client.callTool({ name: 'search_docs', arguments: args });
      const { budget, passages } = ok(result);
      assert.equal(budget.tokenizer, 'o200k_base');
      assert.ok(budget.tokens <= 400, JSON.stringify(budget));
      assert.equal(budget.passages, passages.length);
      assert.equal(passages[0].file_path, 'compost.md');
      // The text the agent reads is the context, and only it.
      assert.equal(result.content.length, 1);
      const rest = await fetch(`${server.url}/api/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args),
      }).then((r) => r.json());
      assert.equal(result.content[0].text, rest.context);
      assert.match(rest.context, /^### Compost\nSource: gardening 1\.0 · compost\.md\n\n/);
    });

    test('get_document returns the whole stored document', async () => {
      const doc = ok(
        await client.callTool({
          name: 'get_document',
          arguments: { library: 'gardening', version: 'latest', file_path: 'roses.md' },
        }),
      );
      assert.equal(doc.version, '1.0');
      assert.match(doc.text, /Prune roses in late winter/);
      const rest = await (
        await fetch(`${server.url}/api/documents?library=gardening&version=1.0&file_path=roses.md`)
      ).json();
      assert.equal(doc.text, rest.text);
    });

    test('get_document reads one section, and a budget cuts where a block starts', async () => {
      const result = await client.callTool({
        name: 'get_document',
        arguments: { library: 'gardening', version: 'latest', file_path: 'compost.md', section: 'turning' },
      });
      const about = ok(result);
      assert.equal(about.section, 'Compost > Turning');
      assert.equal(result.content[0].text, '## Turning\n\nTurn the heap every two weeks to let air in.\n\n');
      assert.equal(about.text, undefined);
      const missing = await client.callTool({
        name: 'get_document',
        arguments: { library: 'gardening', version: '1.0', file_path: 'compost.md', section: 'Mulch' },
      });
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent.code, 'unknown_section');
      assert.match(errorText(missing), /Compost > Greens and browns/);
    });

    test('documents are resources, read whole, by section or within a budget', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri).sort();
      assert.deepEqual(uris, [
        'docshelf://gardening/1.0/compost.md',
        'docshelf://gardening/1.0/roses.md',
        'docshelf://gardening/1.0/tomatoes.md',
        'docshelf://nextjs/14.0/routing.md',
        'docshelf://nextjs/14.0/tomato-demo.md',
      ]);
      assert.ok(resources.every((r) => r.mimeType === 'text/markdown'));
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.match(resourceTemplates[0].uriTemplate, /^docshelf:\/\/\{library\}\/\{version\}\/\{\+file_path\}/);

      const whole = await client.readResource({ uri: 'docshelf://gardening/latest/compost.md' });
      const rest = await (
        await fetch(`${server.url}/api/documents?library=gardening&version=1.0&file_path=compost.md`)
      ).json();
      assert.equal(whole.contents[0].text, rest.text);
      const section = await client.readResource({
        uri: 'docshelf://gardening/1.0/compost.md?section=Compost%20%3E%20Greens%20and%20browns',
      });
      assert.equal(section.contents[0].text, '## Greens and browns\n\nMix green kitchen scraps with brown leaves, about one part to three.\n\n');
      // 50 tokens hold the first sections, not the last one's long paragraph.
      const cut = (await client.readResource({ uri: 'docshelf://gardening/1.0/compost.md?max_tokens=50' })).contents[0].text;
      assert.ok(rest.text.startsWith(cut) && cut.length < rest.text.length, cut);
      assert.ok(cut.includes('Turn the heap') && !cut.includes('Spread finished compost'), cut);
      await assert.rejects(client.readResource({ uri: 'docshelf://gardening/1.0/nothing.md' }), /no document/);
      // An address is checked as get_document's arguments are, before any lookup.
      await assert.rejects(
        client.readResource({ uri: `docshelf://${'g'.repeat(500)}/1.0/compost.md` }),
        /library is 500 bytes long/,
      );
      await assert.rejects(
        client.readResource({ uri: 'docshelf://gardening/1.0/compost.md?section=Turning%01' }),
        /section cannot contain control/,
      );
      await assert.rejects(
        client.readResource({ uri: 'docshelf://gardening/1.0/compost.md?max_tokens=10' }),
        /max_tokens must be 50\.\.100000/,
      );
    });

    test('add_docs takes the REST request and refuses the server\'s own network', async () => {
      const refused = await client.callTool({
        name: 'add_docs',
        arguments: { url: 'http://127.0.0.1:9/docs/', library: 'local', version: '1' },
      });
      assert.equal(refused.structuredContent.code, 'source_unreachable');
      assert.equal(refused.structuredContent.kind, 'bad_input');
      assert.match(errorText(refused), /127\.0\.0\.1 is a loopback address/);
    });

    test('bad input comes back as tool errors with the REST messages', async () => {
      assert.equal(
        errorText(await client.callTool({ name: 'search_docs', arguments: { query: '   ' } })),
        'query cannot be empty',
      );
      assert.equal(
        errorText(await client.callTool({ name: 'search_docs', arguments: { query: 'x', k: 99 } })),
        'k must be 1..50',
      );
      const rest = await fetch(`${server.url}/api/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'x', k: 99 }),
      });
      assert.equal(rest.status, 400);
      const restBody = await rest.json();
      assert.equal(restBody.error, 'k must be 1..50');
      // One error table for both faces: the same code, by the same name.
      const tooMany = await client.callTool({ name: 'search_docs', arguments: { query: 'x', k: 99 } });
      assert.deepEqual(tooMany.structuredContent, {
        code: 'invalid_search',
        kind: 'bad_input',
        error: 'k must be 1..50',
        link: 'docs/errors.md#invalid_search',
      });
      assert.deepEqual(restBody, tooMany.structuredContent);
      const missing = await client.callTool({
        name: 'get_document',
        arguments: { library: 'gardening', version: '9.9', file_path: 'roses.md' },
      });
      assert.equal(missing.structuredContent.code, 'unknown_version');
      assert.equal(missing.structuredContent.kind, 'not_found');
      // A name over its limit is a bad name, as on every face; a budget out
      // of range is a bad parameter of the read.
      const longName = await client.callTool({
        name: 'get_document',
        arguments: { library: 'g'.repeat(500), version: '1.0', file_path: 'roses.md' },
      });
      assert.equal(longName.structuredContent.code, 'invalid_name');
      assert.equal(longName.structuredContent.kind, 'bad_input');
      const tinyBudget = await client.callTool({
        name: 'get_document',
        arguments: { library: 'gardening', version: '1.0', file_path: 'roses.md', max_tokens: 10 },
      });
      assert.equal(tinyBudget.structuredContent.code, 'invalid_read');
      assert.equal(tinyBudget.structuredContent.kind, 'bad_input');
      assert.equal(errorText(tinyBudget), 'max_tokens must be 50..100000');
      assert.match(
        errorText(await client.callTool({ name: 'search_docs', arguments: { query: 'x', library: 'kubernetes' } })),
        /no library matches "kubernetes"; stored libraries: .*gardening/,
      );
      assert.match(
        errorText(
          await client.callTool({
            name: 'get_document',
            arguments: { library: 'gardening', version: '1.0', file_path: 'nope.md' },
          }),
        ),
        /no document "nope.md"/,
      );
    });
  });
}

describe('MCP writes over HTTP with a token', () => {
  let guarded;

  let reader;

  before(async () => {
    guarded = await startServer({ args: ['--token', 'mcp-secret'] });
    for (const [library, text] of [
      ['alpha', '# Hinges\n\nOil the quibbleflux hinges every spring.\n'],
      ['beta', '# Codes\n\nThe quibbleflux launch codes are kept here.\n'],
    ]) {
      const job = await uploadAndWait(guarded.url, {
        library,
        version: '1.0',
        files: [{ name: 'page.md', text }],
        token: 'mcp-secret',
      });
      assert.equal(job.error ?? null, null);
    }
    const made = await fetch(`${guarded.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer mcp-secret', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'agent-alpha', grants: [{ role: 'read', libraries: 'alpha' }] }),
    });
    assert.equal(made.status, 201);
    reader = (await made.json()).token;
  });

  after(async () => {
    await guarded?.stop();
  });

  async function connect(headers) {
    const client = new Client({ name: 'docshelf-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${guarded.url}/mcp`), { requestInit: { headers } }),
    );
    return client;
  }

  test('add_docs needs the write token, as POST /api/sources does', async () => {
    const anonymous = await connect({});
    const arguments_ = { url: 'http://127.0.0.1:9/docs/', library: 'local', version: '1' };
    const refused = await anonymous.callTool({ name: 'add_docs', arguments: arguments_ });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent.code, 'missing_token');
    await anonymous.close();

    const admitted = await connect({ Authorization: 'Bearer mcp-secret' });
    const past = await admitted.callTool({ name: 'add_docs', arguments: arguments_ });
    // Past the guard: the request itself is judged (a loopback URL).
    assert.equal(past.structuredContent.kind, 'bad_input');
    await admitted.close();
  });

  test('a read token sees only its library through every tool, and cannot write', async () => {
    const agent = await connect({ Authorization: `Bearer ${reader}` });
    const listed = await agent.callTool({ name: 'list_libraries', arguments: {} });
    assert.deepEqual(listed.structuredContent.libraries.map((l) => l.name), ['alpha']);

    const found = await agent.callTool({ name: 'search_docs', arguments: { query: 'quibbleflux', mode: 'keyword' } });
    const libraries = found.structuredContent.results.map((r) => r.library);
    assert.deepEqual([...new Set(libraries)], ['alpha']);
    assert.ok(!JSON.stringify(found).includes('launch codes'));

    const hidden = await agent.callTool({
      name: 'get_document',
      arguments: { library: 'beta', version: '1.0', file_path: 'page.md' },
    });
    const never = await agent.callTool({
      name: 'get_document',
      arguments: { library: 'zzzz', version: '1.0', file_path: 'page.md' },
    });
    assert.equal(hidden.isError, true);
    assert.equal(hidden.structuredContent.code, 'unknown_library');
    assert.equal(
      JSON.stringify(hidden.structuredContent).replaceAll('beta', 'NAME'),
      JSON.stringify(never.structuredContent).replaceAll('zzzz', 'NAME'),
    );
    const { resources } = await agent.listResources();
    assert.ok(resources.length > 0 && resources.every((r) => r.uri.startsWith('docshelf://alpha/')), JSON.stringify(resources));
    const hiddenRead = await agent.readResource({ uri: 'docshelf://beta/1.0/page.md' }).catch((e) => e.message);
    const neverRead = await agent.readResource({ uri: 'docshelf://zzzz/1.0/page.md' }).catch((e) => e.message);
    assert.equal(hiddenRead.replaceAll('beta', 'NAME'), neverRead.replaceAll('zzzz', 'NAME'));
    const resolved = await agent.callTool({ name: 'resolve_library', arguments: { name: 'bet' } });
    assert.ok(!JSON.stringify(resolved).includes('beta'));

    const write = await agent.callTool({
      name: 'add_docs',
      arguments: { url: 'http://127.0.0.1:9/docs/', library: 'alpha', version: '2' },
    });
    assert.equal(write.isError, true);
    assert.equal(write.structuredContent.code, 'not_permitted');
    await agent.close();
  });
});

describe('What changed between two versions, as MCP resources', () => {
  let guarded;
  let reader;
  const admin = { Authorization: 'Bearer mcp-secret' };
  const guide = (install) => `# Guide\n\nHow to use widgets.\n\n## Install\n\n${install}\n\n## Configure\n\nSet WIDGETS_HOME to a folder.\n`;

  before(async () => {
    guarded = await startServer({ args: ['--token', 'mcp-secret'] });
    for (const [library, version, files] of [
      ['widgets', '1.0', [{ name: 'guide.md', text: guide('Run pip install widgets.') }, { name: 'old.md', text: '# Old\n\nGoing away.\n' }]],
      ['widgets', '2.0', [{ name: 'guide.md', text: guide('Run uv add widgets.') }, { name: 'new.md', text: '# New\n\nA new page.\n' }]],
      ['secret', '1.0', [{ name: 'page.md', text: '# Codes\n\nThe launch codes.\n' }]],
      ['secret', '2.0', [{ name: 'page.md', text: '# Codes\n\nThe new launch codes.\n' }]],
    ]) {
      const job = await uploadAndWait(guarded.url, { library, version, files, token: 'mcp-secret' });
      assert.equal(job.error ?? null, null);
    }
    const made = await fetch(`${guarded.url}/api/tokens`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'agent-widgets', grants: [{ role: 'read', libraries: 'widgets' }] }),
    });
    assert.equal(made.status, 201);
    reader = (await made.json()).token;
  });

  after(async () => {
    await guarded?.stop();
  });

  async function connect(headers) {
    const client = new Client({ name: 'docshelf-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${guarded.url}/mcp`), { requestInit: { headers } }),
    );
    return client;
  }

  /** The JSON-RPC error a refused read answers, with the error body as its data. */
  const refusal = (client, uri) =>
    client.readResource({ uri }).then(
      () => assert.fail(`${uri} was read`),
      (err) => err,
    );

  test('a comparison is a resource read as compare_versions answers it', async () => {
    const agent = await connect({ Authorization: `Bearer ${reader}` });
    const { resourceTemplates } = await agent.listResourceTemplates();
    const template = resourceTemplates.find((t) => t.name === 'changes');
    assert.equal(template.uriTemplate, 'docshelf-changes://{library}/{from}/{to}{?file_path,max_tokens}');
    assert.equal(template.mimeType, 'application/json');
    // Comparisons are not listed: there is one per pair of versions.
    const { resources } = await agent.listResources();
    assert.ok(resources.every((r) => r.uri.startsWith('docshelf://widgets/')), JSON.stringify(resources));

    const read = await agent.readResource({ uri: 'docshelf-changes://widgets/1.0/latest' });
    assert.equal(read.contents.length, 1);
    assert.equal(read.contents[0].mimeType, 'application/json');
    assert.equal(read.contents[0].uri, 'docshelf-changes://widgets/1.0/latest');
    const tool = await agent.callTool({ name: 'compare_versions', arguments: { library: 'widgets', from: '1.0', to: 'latest' } });
    assert.notEqual(tool.isError, true, JSON.stringify(tool));
    assert.equal(read.contents[0].text, tool.content[0].text);
    const changes = JSON.parse(read.contents[0].text);
    assert.equal(changes.to, '2.0');
    assert.deepEqual(
      changes.documents.map((d) => [d.change, d.file_path]),
      [['changed', 'guide.md'], ['added', 'new.md'], ['removed', 'old.md']],
    );
    const install = changes.documents[0].sections.find((s) => s.heading_path === 'Guide > Install');
    assert.match(install.diff, /\[-pip install-\] \{\+uv add\+\}/);

    // A path prefix and a budget, as the tool takes them.
    const narrowed = JSON.parse(
      (await agent.readResource({ uri: 'docshelf-changes://widgets/1.0/2.0?file_path=new&max_tokens=50' })).contents[0].text,
    );
    assert.deepEqual(narrowed.documents.map((d) => d.file_path), ['new.md']);
    assert.ok(narrowed.tokens <= 50, JSON.stringify(narrowed));
    await agent.close();
  });

  test('a comparison refused is answered as a document read is, from the one error table', async () => {
    const agent = await connect({ Authorization: `Bearer ${reader}` });
    const unknown = await refusal(agent, 'docshelf-changes://widgets/0.9/2.0');
    assert.equal(unknown.data.code, 'unknown_version');
    assert.equal(unknown.data.kind, 'not_found');
    assert.match(unknown.message, /no version "0\.9" \(it has 2\.0, 1\.0\)/);
    const shape = await refusal(agent, 'docshelf-changes://widgets/1.0');
    assert.equal(shape.data.code, 'invalid_read');
    const budget = await refusal(agent, 'docshelf-changes://widgets/1.0/2.0?max_tokens=10');
    assert.match(budget.message, /max_tokens must be 50\.\.100000/);

    // A library the token may not read is one that does not exist.
    const hidden = await refusal(agent, 'docshelf-changes://secret/1.0/2.0');
    const never = await refusal(agent, 'docshelf-changes://zzzzzz/1.0/2.0');
    assert.equal(hidden.data.code, 'unknown_library');
    assert.equal(hidden.message.replaceAll('secret', 'NAME'), never.message.replaceAll('zzzzzz', 'NAME'));
    assert.ok(!JSON.stringify(hidden).includes('launch codes'));
    await agent.close();

    // The admin token reads it.
    const operator = await connect(admin);
    const secret = JSON.parse((await operator.readResource({ uri: 'docshelf-changes://secret/1.0/2.0' })).contents[0].text);
    assert.deepEqual(secret.documents.map((d) => [d.change, d.file_path]), [['changed', 'page.md']]);
    await operator.close();
  });
});
