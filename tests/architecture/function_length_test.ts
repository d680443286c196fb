/**
 * No function, method or arrow function in `src/plan` and `src/safety` is
 * longer than 80 lines: the safety chain stays readable one piece at a
 * time. Files are parsed with Deno's own TypeScript parser (the lint
 * plugin API), so strings, comments and template literals cannot fool it.
 */
import assert from "node:assert/strict";
import { lineCount, SRC, tsFiles } from "./sources.ts";

const MAX_FUNCTION_LINES = 80;
const FOLDERS = ["plan/", "plan_model/", "safety/"];

interface Measured {
  name: string;
  line: number;
  lines: number;
}

/** Every function-like node of `source` with its first line and its length in lines. */
export function functionsOf(file: string, source: string): Measured[] {
  const found: Measured[] = [];
  const measure = (node: Deno.lint.Node, name: string) => {
    const [start, end] = node.range;
    found.push({
      name,
      line: lineCount(source.slice(0, start)) + (start === 0 || source[start - 1] === "\n" ? 1 : 0),
      lines: lineCount(source.slice(start, end)),
    });
  };
  const nameOf = (
    node: Deno.lint.FunctionExpression | Deno.lint.ArrowFunctionExpression,
  ): string => {
    const parent = node.parent;
    if (parent?.type === "MethodDefinition" || parent?.type === "Property") {
      const key = parent.key;
      return key.type === "Identifier" || key.type === "PrivateIdentifier"
        ? key.name
        : "(computed)";
    }
    if (parent?.type === "VariableDeclarator" && parent.id.type === "Identifier") {
      return parent.id.name;
    }
    return "(anonymous)";
  };
  const plugin: Deno.lint.Plugin = {
    name: "architecture",
    rules: {
      "function-length": {
        create() {
          return {
            FunctionDeclaration(node) {
              measure(node, node.id?.name ?? "(anonymous)");
            },
            FunctionExpression(node) {
              // A method is measured from its name, not from its parameter list.
              const p = node.parent;
              measure(p?.type === "MethodDefinition" ? p : node, nameOf(node));
            },
            ArrowFunctionExpression(node) {
              measure(node, nameOf(node));
            },
          };
        },
      },
    },
  };
  Deno.lint.runPlugin(plugin, file, source);
  return found;
}

Deno.test("the measure counts a function's lines from its first line to its closing brace", () => {
  const source = [
    "const s = `function fake() {`; // function not() {",
    "/** doc */",
    "export function outer(a: number) {",
    "  const inner = (b: number) => {",
    "    return b + '}';",
    "  };",
    "  return inner(a);",
    "}",
    "class C {",
    "  method(): void {",
    "    /* } */",
    "  }",
    "}",
    "",
  ].join("\n");
  assert.deepEqual(
    functionsOf("probe.ts", source).map(({ name, line, lines }) => [name, line, lines]),
    [["outer", 3, 6], ["inner", 4, 3], ["method", 10, 3]],
  );
});

Deno.test("no function in src/plan, src/plan_model or src/safety is longer than 80 lines", async () => {
  const tooLong: string[] = [];
  for (const folder of FOLDERS) {
    for (const rel of await tsFiles(folder)) {
      const source = await Deno.readTextFile(new URL(rel, SRC));
      for (const f of functionsOf(rel, source)) {
        if (f.lines > MAX_FUNCTION_LINES) {
          tooLong.push(`src/${rel}:${f.line} ${f.name} is ${f.lines} lines`);
        }
      }
    }
  }
  assert.deepEqual(tooLong, [], `split these along their seams (at most ${MAX_FUNCTION_LINES})`);
});
