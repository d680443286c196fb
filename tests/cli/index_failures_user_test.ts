/**
 * `index stats` and `index refresh` under a user's grants against a
 * ChannelFinder that fails in the ordinary ways: not listening, a cursor it
 * ignores (the same page again), pages that overlap, a namespace that grows
 * while it is paged past the configured bound. Each is one line on stderr
 * and exit 1, never a stack trace; a failed refresh keeps the cache it had
 * and leaves no temporary file. A ChannelFinder whose channels carry
 * kilobytes of text each is indexed in bounded memory, each text cut short.
 */
import assert from "node:assert/strict";
import { LAUNCHER_FLAGS, UserSetup } from "../support/user_grants.ts";
import { childEnv, ROOT, type RunResult } from "../support/run_agent.ts";

/** `n` ChannelFinder channels named `SR:SYN:<k>` for k from `first`, in name order. */
function channels(first: number, n: number) {
  return Array.from({ length: n }, (_, i) => ({
    name: `SR:SYN:${String(first + i).padStart(6, "0")}`,
    owner: "recceiver",
    properties: [{ name: "recordType", value: "ai", owner: "recceiver", channels: [] }],
    tags: [],
  }));
}

/** Asserts one line naming the failure, exit 1, and nothing a stack trace prints. */
function oneLine(r: RunResult, re: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] ?? "", re);
  assert.doesNotMatch(r.stderr, /internal error|^\s+at |Stack backtrace/m);
}

/** The files of the index cache directory. */
function cacheFiles(user: UserSetup): string[] {
  try {
    return [...Deno.readDirSync(`${user.stateDir}/index`)].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

type Respond = (url: URL) => Response | undefined;

/** ChannelFinder answers: the count, and pages made by `page(k)` for the k-th request of a page. */
function pages(count: number, page: (k: number, url: URL) => unknown): Respond {
  let k = 0;
  return (url) => {
    if (url.pathname.endsWith("/channels/count")) return new Response(String(count));
    if (url.pathname.includes("/channels") || url.pathname.includes("/scroll")) {
      const body = page(k++, url);
      return Response.json(url.pathname.includes("/scroll") ? { id: null, channels: body } : body);
    }
    return undefined;
  };
}

const FAULTS: [string, Respond, RegExp][] = [
  [
    "a cursor it ignores: every page is the first",
    pages(2000, () => channels(0, 1000)),
    /^accel-agent: the device index could not be (read|refreshed): ChannelFinder at \S+ ignores ~search_after, \/scroll and ~from \(page 1000 started again at SR:SYN:000000\); it cannot be read page by page$/,
  ],
  [
    "pages that overlap the one before",
    // Each page starts 100 channels before where it was asked to, whichever cursor asks.
    pages(2000, (_, url) => {
      const after = url.searchParams.get("~search_after") ??
        /\/scroll\/([^/?]+)/.exec(url.pathname)?.[1];
      const from = after === undefined
        ? Number(url.searchParams.get("~from") ?? 0)
        : Number(decodeURIComponent(after).slice("SR:SYN:".length)) + 1;
      return channels(Math.max(0, from - 100), 1000);
    }),
    /^accel-agent: the device index could not be (read|refreshed): ChannelFinder at \S+ ignores ~search_after, \/scroll and ~from .*; it cannot be read page by page$/,
  ],
  [
    "a namespace that grows while it is paged",
    pages(1500, (k) => channels(1000 * k, 1000)),
    /^accel-agent: the device index could not be (read|refreshed): ChannelFinder at \S+ holds 3000 channels, more than \[epics\] index_max_channels = 2500; raise it to index them all$/,
  ],
];

for (const [what, respond, re] of FAULTS) {
  Deno.test(`index stats and refresh against ChannelFinder with ${what}: one line, exit 1, the old cache kept`, async () => {
    await using user = await UserSetup.start({ epicsConfig: { index_max_channels: 2500 } });
    const good = await user.run(["index", "refresh"]);
    assert.equal(good.code, 0, good.stderr);
    const cache = cacheFiles(user);
    assert.equal(cache.length, 1, cache.join(", "));
    const before = await Deno.readFile(`${user.stateDir}/index/${cache[0]}`);
    user.epics.channelfinder.faults.respond = respond;
    oneLine(await user.run(["index", "refresh"]), re);
    assert.deepEqual(cacheFiles(user), cache, "a temporary file was left behind");
    assert.deepEqual(await Deno.readFile(`${user.stateDir}/index/${cache[0]}`), before);
    // Without a cache, stats reads the namespace and fails the same way.
    await Deno.remove(`${user.stateDir}/index`, { recursive: true });
    oneLine(await user.run(["index", "stats"]), re);
    oneLine(await user.run(["index", "stats", "--json"]), re);
  });
}

Deno.test("index stats and refresh against a ChannelFinder that is not listening: one line each, exit 1", async () => {
  // A port that was just free: nothing listens there.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using user = await UserSetup.start({
    epicsConfig: { channelfinder_url: `http://127.0.0.1:${port}/ChannelFinder/resources` },
  });
  for (const action of ["stats", "refresh"]) {
    const r = await user.run(["index", action]);
    oneLine(
      r,
      /^accel-agent: the device index could not be (read|refreshed): ChannelFinder at http:\/\/127\.0\.0\.1:\d+\/ChannelFinder\/resources is unreachable \(.*\); check the URL in the config$/,
    );
  }
  assert.deepEqual(cacheFiles(user), []);
});

/** The largest resident set, in MiB, of `accel-agent ARGS` run through the launcher (GNU time). */
async function peakMib(user: UserSetup, args: string[]): Promise<{ r: RunResult; mib: number }> {
  const mem = `${user.dir}/maxrss`;
  const started = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%M",
      "-o",
      mem,
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      `${ROOT}/launch.ts`,
      "--config",
      user.configPath,
      ...args,
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(),
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const kib = Number((await Deno.readTextFile(mem)).trim().split("\n").at(-1));
  const r = {
    code: out.code,
    stdout: text(out.stdout),
    stderr: text(out.stderr),
    ms: performance.now() - started,
  };
  return { r, mib: kib / 1024 };
}

Deno.test("a ChannelFinder whose every channel carries 14 KB of text is indexed in bounded memory, each text cut short", async () => {
  await using user = await UserSetup.start();
  const fat = (i: number) => `${i} `.padEnd(7_000, "long text ");
  // Pages of 1000 channels, each within [epics] channelfinder_max_bytes (16 MiB).
  user.epics.channelfinder.faults.respond = pages(40_000, (_, url) => {
    const after = url.searchParams.get("~search_after");
    const from = after === null ? 0 : Number(after.slice("SR:FAT:".length)) + 1;
    return Array.from({ length: Math.max(0, Math.min(1000, 40_000 - from)) }, (_, j) => ({
      name: `SR:FAT:${String(from + j).padStart(6, "0")}`,
      owner: "recceiver",
      properties: [
        { name: "recordDesc", value: fat(from + j), owner: "recceiver", channels: [] },
        { name: "note", value: fat(-(from + j)), owner: "recceiver", channels: [] },
      ],
      tags: [],
    }));
  });
  const { r, mib } = await peakMib(user, ["index", "refresh"]);
  assert.equal(r.code, 0, r.stderr);
  // Unbounded, it ended in a V8 out-of-memory crash past 4 GB; bounded, about 700 MiB here.
  assert.ok(mib < 1024, `peak resident memory ${mib.toFixed(0)} MiB`);
  const stats = await user.run(["index", "stats", "--json"]);
  assert.equal(JSON.parse(stats.stdout).devices, 40_000, stats.stderr);
  // Words are answered from the index (patterns go to ChannelFinder itself).
  const found = await user.run(["search", "--words", "long text 7", "--limit", "1", "--json"]);
  assert.equal(found.code, 0, found.stderr);
  const [device] = JSON.parse(found.stdout).devices;
  assert.equal(device.name, "SR:FAT:000007");
  assert.ok(device.description.startsWith("7 long text"), device.description);
  assert.ok(device.description.length <= 512, `${device.description.length} characters kept`);
});
