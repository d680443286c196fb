// deno-lint-ignore-file no-control-regex -- these tests are about our own escape sequences
/**
 * Text on the approval screen has a width the program knows: what the table
 * library measures is what the program measures, the characters whose width
 * a terminal may draw otherwise are escaped, and lines are cut by the
 * program with their continuation marked.
 */
import assert from "node:assert/strict";
import Table from "cli-table3";
import {
  cellText,
  certainWidth,
  CONTINUED,
  fitToWidth,
  MAX_CELL_TEXT,
  screenText,
  screenWidth,
  wrapLine,
} from "../../src/cli/term/screen_text.ts";
import { stripAnsi, style } from "../../src/cli/term/style.ts";
import { HAS_TMUX, TmuxSession } from "../support/tmux.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

/** Every code point the screen keeps as it is, in blocks of up to `n` columns. */
function certainBlocks(n: number): string[] {
  const blocks: string[] = [];
  let block = "", used = 0;
  for (let cp = 0x20; cp <= 0x3ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const w = certainWidth(cp);
    if (w === undefined) continue;
    if (used + w > n) {
      blocks.push(block);
      block = "";
      used = 0;
    }
    block += String.fromCodePoint(cp);
    used += w;
  }
  blocks.push(block);
  return blocks;
}

Deno.test("every character the screen keeps as it is, the table library measures as the program does", () => {
  const blocks = certainBlocks(60);
  assert.ok(blocks.length > 1500, `${blocks.length} blocks`);
  // A one-column table pads each cell by its own measure: rows all as wide as the program says.
  const table = new Table({ colWidths: [64], wordWrap: false, style: { head: [], border: [] } });
  for (const b of blocks) table.push([b]);
  const rows = table.toString().split("\n");
  const widths = new Set(rows.map(screenWidth));
  assert.deepEqual([...widths], [66], "every row 64 columns and two borders");
});

Deno.test({
  name:
    "every character the screen keeps is drawn by a real terminal (tmux) no wider than the program measures it",
  ignore: !HAS_TMUX && !Deno.env.get("CI"),
  async fn() {
    // Lines of 180 columns of them, padded with ASCII to exactly the pane's 200: a line drawn
    // wider than measured would wrap into a second row.
    const lines = certainBlocks(180).map((b) => b + "x".repeat(200 - screenWidth(b)));
    await using dir = await tempDir();
    const file = `${dir.path}/lines.txt`;
    await Deno.writeTextFile(file, `BEGIN\n${lines.join("\n")}\nEND\n`);
    await using term = await TmuxSession.start(
      ["cat", file],
      childEnv({ LANG: "C.UTF-8", LC_ALL: "C.UTF-8" }),
      ROOT,
      { columns: 200, rows: 50 },
    );
    await term.waitFor(/^END$/m);
    const rows = await term.rows(lines.length + 100);
    const begin = rows.indexOf("BEGIN"), end = rows.indexOf("END");
    assert.ok(begin >= 0 && end > begin, rows.slice(0, 5).join("\n"));
    assert.equal(end - begin - 1, lines.length, "no line took a second row");
  },
});

Deno.test("characters a terminal may draw at another width are escaped: emoji, joiners, selectors, combining marks, other scripts, private use", () => {
  const cases: [string, string][] = [
    ["👨‍👩‍👧", "\\u{1f468}\\u{200d}\\u{1f469}\\u{200d}\\u{1f467}"],
    ["☺️", "\\u{263a}\\u{fe0f}"],
    ["e\u0301", "e\\u{0301}"],
    ["שלום", "\\u{05e9}\\u{05dc}\\u{05d5}\\u{05dd}"],
    ["\ue000", "\\u{e000}"],
    ["🇩🇪", "\\u{1f1e9}\\u{1f1ea}"],
    ["\u0378", "\\u{0378}"],
  ];
  for (const [text, shown] of cases) assert.equal(screenText(text), shown, text);
  // What is certain stays: Latin, Greek, Cyrillic, units and arrows, CJK.
  for (const text of ["Strahlstrom µA ±0.5 °C", "Δφ → 3 mrad", "Ток пучка", "ビーム電流 빔"]) {
    assert.equal(screenText(text), text);
  }
  // In a table cell the table's own glyphs are escaped; outside one they stay.
  assert.equal(screenText("│ 1 ┼ ▌", { cell: true }), "\\u{2502} 1 \\u{253c} \\u{258c}");
  assert.equal(screenText("│ 1"), "│ 1");
  // Controls are escaped before anything else.
  assert.equal(screenText("a\x1b[2Jb\nc"), "a\\x1b[2Jb\\nc");
});

Deno.test("a line is wrapped to a width in columns: wide characters count two, spaces are preferred", () => {
  assert.deepEqual(wrapLine("orbit correction at BPM three", 12), [
    "orbit",
    "correction",
    "at BPM three",
  ]);
  assert.deepEqual(wrapLine("ビーム電流ビーム電流", 5), ["ビー", "ム電", "流ビ", "ーム", "電流"]);
  assert.deepEqual(wrapLine("x".repeat(10), 4), ["xxxx", "xxxx", "xx"]);
  assert.deepEqual(wrapLine("", 10), [""]);
  // Narrower than one wide character: one character a piece, never none.
  assert.deepEqual(wrapLine("電流", 1), ["電", "流"]);
  for (const width of [1, 2, 3, 7, 13, 40]) {
    for (const piece of wrapLine(screenText("Strom 電流 │ µA ".repeat(20)), width)) {
      assert.ok(screenWidth(piece) <= Math.max(width, 2), `${piece} at ${width}`);
    }
  }
});

Deno.test("lines wider than the terminal are cut by the program, each continuation marked; styling is never split", () => {
  const s = style(true);
  const line = `${s.bold("│ 1 │ write │")} ${"x".repeat(50)}${s.yellow("│ 2 │ fake row")}`;
  for (const columns of [10, 20, 33, 80]) {
    const out = fitToWidth(`short\n${line}`, columns).split("\n");
    assert.equal(out[0], "short");
    for (const [i, l] of out.entries()) {
      assert.ok(screenWidth(l) <= columns, `line ${i} at ${columns}: ${l}`);
      if (i > 1) assert.ok(stripAnsi(l).startsWith(CONTINUED), `unmarked at ${columns}: ${l}`);
      // Every escape in the output is one of ours, whole.
      assert.doesNotMatch(l.replace(/\x1b\[[0-9;]*m/g, ""), /\x1b/);
    }
    assert.equal(
      stripAnsi(out.slice(1).map((l, i) => (i ? l.slice(CONTINUED.length) : l)).join("")),
      stripAnsi(line),
      "nothing lost",
    );
  }
  assert.equal(fitToWidth("fits\nexactly", 7), "fits\nexactly");
});

Deno.test("a cell's text is bounded in columns, escapes included, and says it was cut", () => {
  assert.equal(cellText("RF:PHASE:SETPT"), "RF:PHASE:SETPT");
  for (const text of ["x".repeat(5000), "│".repeat(1000), "電流 ".repeat(1000)]) {
    const shown = cellText(text);
    assert.ok(screenWidth(shown) <= MAX_CELL_TEXT, `${screenWidth(shown)}`);
    assert.ok(shown.endsWith("…"));
    assert.doesNotMatch(shown, /│/);
  }
});
