/**
 * The fast checks before a run (imports), the output cap, and script
 * docstrings: plain functions, tested as tables.
 */
import assert from "node:assert/strict";
import { analyse, findImports } from "../../src/sandbox/analysis.ts";
import { OutputCap } from "../../src/sandbox/output_cap.ts";
import { docstring, scriptName } from "../../src/sandbox/scripts.ts";

Deno.test("imports are found in every form Python writes them", () => {
  assert.deepEqual(
    findImports(
      "import os, sys as system\nfrom pyodide import ffi\n  from a.b import (c, d as e)\nx = 'import no'",
    ),
    ["os", "sys", "pyodide", "pyodide.ffi", "a.b", "a.b.c", "a.b.d"],
  );
});

Deno.test("blocked imports name the reason; the standard library passes quietly", () => {
  const cases: [string, string[], string[]][] = [
    ["import csv, json, statistics, sqlite3", [], []],
    ["from pyodide.ffi import to_js", ["import pyodide.ffi: the JavaScript bridge"], []],
    ["from pyodide import http", ["import pyodide.http: the sandbox has no network"], []],
    ["import urllib.request", ["import urllib.request: the sandbox has no network"], []],
    ["import subprocess", ["import subprocess: the sandbox cannot start programs"], []],
    ["import tango", ["import tango: control-system clients"], []],
    ["import numpy", [], ["import numpy: not a known standard-library or local package"]],
    ["import pyodide.code", ["import pyodide.code: the JavaScript bridge"], []],
    ["from pyodide import code", ["import pyodide.code: the JavaScript bridge"], []],
    ["import asyncio", [], []],
  ];
  for (const [code, blocked, warnings] of cases) {
    const a = analyse(code);
    assert.equal(a.blocked.length, blocked.length, `${code}: ${a.blocked}`);
    blocked.forEach((b, i) => assert.ok(a.blocked[i]?.startsWith(b), `${code}: ${a.blocked[i]}`));
    assert.deepEqual(a.warnings, warnings, code);
  }
  assert.deepEqual(analyse("import numpy", ["numpy"]).warnings, []);
});

Deno.test("the output cap keeps head and tail and counts what it left out", () => {
  const cap = new OutputCap(100);
  cap.push("H".repeat(60));
  for (let i = 0; i < 1000; i++) cap.push("x".repeat(10));
  cap.push("T".repeat(40));
  const text = cap.text();
  assert.ok(text.startsWith("H".repeat(60)));
  assert.ok(text.endsWith("T".repeat(40)));
  assert.match(text, /\[10000 characters left out\]/);
  const small = new OutputCap(100);
  small.push("short\n");
  assert.equal(small.text(), "short\n");
});

Deno.test("a script's description is its module docstring's first line", () => {
  assert.equal(
    docstring('#!/usr/bin/env python3\n# c\n"""Orbit RMS.\n\nMore."""\nx = 1'),
    "Orbit RMS.\n\nMore.",
  );
  assert.equal(docstring("'''Single quotes.'''"), "Single quotes.");
  assert.equal(docstring('"one line"\n'), "one line");
  assert.equal(docstring("x = 1\n"), "");
});

Deno.test("script names are plain words; paths are refused", () => {
  assert.equal(scriptName("orbit_rms.py"), "orbit_rms");
  for (const bad of ["../x", "/etc/passwd", "a b", "", ".hidden"]) {
    assert.throws(() => scriptName(bad), RangeError, bad);
  }
});

Deno.test("imports separated by semicolons are found one statement at a time", () => {
  assert.deepEqual(
    findImports("import csv; rows = list(csv.reader(open('/data/x.csv'))); import json"),
    ["csv", "json"],
  );
});

Deno.test("imports are read as Python reads names: fullwidth, other scripts, continued lines", () => {
  const cases: [string, string[]][] = [
    ["import ｊｓ", ["js"]],
    ["from ｐｙｏｄｉｄｅ．ｆｆｉ import to_js", ["pyodide.ffi", "pyodide.ffi.to_js"]],
    ["import \\\n  js", ["js"]],
    ["import café, データ", ["café", "データ"]],
    ["x = 1\r\nimport js\r\n", ["js"]],
  ];
  for (const [code, imports] of cases) assert.deepEqual(findImports(code), imports, code);
  assert.match(analyse("import ｊｓ").blocked[0] ?? "", /^import js: the JavaScript bridge/);
  assert.match(analyse("from ｐｙｏｄｉｄｅ import ｃｏｄｅ").blocked[0] ?? "", /pyodide\.code/);
});
