/**
 * The `plot` and `display` command lines: each source's options map to the
 * tool's arguments, and a mix that makes no sense is a one-line usage error.
 */
import assert from "node:assert/strict";
import { parseInvocation } from "../../src/cli/args/args.ts";
import { UsageError } from "../../src/app/exit.ts";

const parse = (args: string[]) => parseInvocation(args, false).command;

Deno.test("plot options map to the plot tool's arguments, one source at a time", () => {
  assert.deepEqual(parse(["plot", "A:B", "C:D", "--from", "-8h"]), {
    kind: "plot",
    args: { source: "archive", devices: ["A:B", "C:D"], from: "-8h" },
  });
  assert.deepEqual(parse(["plot", "A:B", "--live", "10s", "--every", "500ms"]), {
    kind: "plot",
    args: { source: "live", devices: ["A:B"], seconds: 10, every: 0.5 },
  });
  assert.deepEqual(parse(["plot", "--scan", "3f2a9c"]), {
    kind: "plot",
    args: { source: "scan", scan: "3f2a9c" },
  });
  assert.deepEqual(parse(["plot", "--csv", "out.csv", "--column", "a", "--column", "b"]), {
    kind: "plot",
    args: { source: "csv", file: "out.csv", columns: ["a", "b"] },
  });
});

Deno.test("a plot command line that mixes sources or lacks one is a usage error", () => {
  const bad: [string[], RegExp][] = [
    [["plot"], /plot needs devices, --scan or --csv/],
    [["plot", "A:B", "--live", "1s", "--scan", "x"], /one source/],
    [["plot", "A:B", "--csv", "x.csv"], /take no devices/],
    [["plot", "A:B", "--every", "1s"], /--every goes with --live/],
    [["plot", "A:B", "--live", "1s", "--to", "now"], /--live reads now/],
    [["plot", "A:B", "--live", "ten"], /is not a duration/],
    [["plot", "A:B", "--live", "2m"], /at most 50 s/],
    [["plot", "A:B", "--column", "x"], /--column goes with --csv/],
    [["plot", "A:B", "--limit", "3"], /--limit is not an option of "plot"/],
  ];
  for (const [args, re] of bad) {
    assert.throws(() => parse(args), (e: Error) => e instanceof UsageError && re.test(e.message));
  }
});

Deno.test("display takes a name and MACRO=VALUE words, or nothing to list", () => {
  assert.deepEqual(parse(["display"]), { kind: "display", macros: [] });
  assert.deepEqual(parse(["display", "orbit", "PLANE=Y"]), {
    kind: "display",
    name: "orbit",
    macros: ["PLANE=Y"],
  });
});
