/**
 * Every import points down: the layers of `docs/architecture.md`, checked
 * over every module under `src/` (static, dynamic and type-only imports
 * alike), so a new upward import fails here with the line that made it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The rooms of the program, top first. A module may import from its own room
 * or from any room below it; rooms on the same line are siblings and do not
 * import each other.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["cli"],
  ["cli/repl"],
  ["cli/commands"],
  ["cli/args", "cli/term"],
  ["eval"],
  ["app"],
  ["tools", "skills"],
  ["agent"],
  ["sandbox", "profiles", "plots", "displays", "elog"],
  ["plan"],
  ["safety"],
  ["plan_model"],
  ["adapters"],
  ["facility"],
  ["config", "llm", "index", "control"],
  ["util", "version"],
];

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** The room a file under `src/` belongs to: `cli/<room>` inside the CLI, else its top folder. */
export function roomOf(path: string, root = SRC): string | undefined {
  const parts = relative(root, path).split("/");
  if (parts[0] === ".." || parts.length === 0) return undefined;
  const top = parts[0]!.replace(/\.ts$/, "");
  if (top === "cli" && parts.length > 2) return `cli/${parts[1]}`;
  return top;
}

function rank(room: string): number {
  const i = LAYERS.findIndex((line) => line.includes(room));
  return i;
}

function* modules(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* modules(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every import from one room to another that does not point down, as "file:line: a -> b". */
export function upwardImports(root = SRC): string[] {
  const found: string[] = [];
  for (const file of modules(root)) {
    const from = roomOf(file, root);
    if (from === undefined) continue;
    const lines = Deno.readTextFileSync(file).split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(IMPORT)) {
        const to = roomOf(resolve(dirname(file), m[1]!), root);
        if (to === undefined || to === from) continue;
        const a = rank(from), b = rank(to);
        if (a < 0 || b < 0 || a >= b) {
          found.push(`${relative(root, file)}:${i + 1}: ${from} -> ${to}`);
        }
      }
    });
  }
  return found;
}

Deno.test("every import in src/ points down the layers of docs/architecture.md", () => {
  assert.deepEqual(upwardImports(), []);
});

Deno.test("every room under src/ has a place in the layers", () => {
  const rooms = new Set<string>();
  for (const file of modules(SRC)) rooms.add(roomOf(file)!);
  const missing = [...rooms].filter((r) => rank(r) < 0);
  assert.deepEqual(missing, []);
});

Deno.test("an import from a lower room to a higher one is reported with its file and line", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(join(dir, "util"));
    Deno.mkdirSync(join(dir, "agent"));
    Deno.writeTextFileSync(join(dir, "agent", "loop.ts"), "export const x = 1;\n");
    Deno.writeTextFileSync(
      join(dir, "util", "bad.ts"),
      '// a helper\nimport type { x } from "../agent/loop.ts";\n',
    );
    assert.deepEqual(upwardImports(dir), ["util/bad.ts:2: util -> agent"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
