/**
 * The SVG a plot writes: well-formed XML holding every series, its minimum
 * and maximum marked, and outside text escaped.
 */
import assert from "node:assert/strict";
import type { PlotData } from "../../src/plots/data.ts";
import { chartSvg, ticks, timeTicks } from "../../src/plots/svg.ts";

/**
 * A strict check of well-formedness for the XML subset an SVG uses: every
 * tag closed in order, attributes quoted and unique, only the five named
 * entities and numeric references, no character XML 1.0 forbids.
 */
function assertWellFormed(xml: string): void {
  // deno-lint-ignore no-control-regex -- what XML 1.0 forbids
  assert.ok(!/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(xml), "a forbidden character");
  const body = xml.replace(/^<\?xml [^?]*\?>\s*/, "");
  const stack: string[] = [];
  let roots = 0;
  const re = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  for (const m of body.matchAll(re)) {
    const [, close, name, attrs, selfClose, text, stray] = m;
    if (stray) assert.fail(`a stray < at ${m.index}`);
    if (text !== undefined) {
      for (const ent of text.matchAll(/&([^;\s]*);?/g)) {
        assert.match(ent[0], /^&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);$/, `entity ${ent[0]}`);
      }
      if (!stack.length) assert.equal(text.trim(), "", "text outside the root");
      continue;
    }
    const names = [...(attrs ?? "").matchAll(/([\w:-]+)=/g)].map((a) => a[1]);
    assert.equal(new Set(names).size, names.length, `duplicate attribute in <${name}>`);
    for (const v of (attrs ?? "").matchAll(/="([^"]*)"/g)) {
      for (const ent of (v[1] ?? "").matchAll(/&([^;\s]*);?/g)) {
        assert.match(ent[0], /^&(amp|lt|gt|quot|apos);$/);
      }
    }
    if (close) assert.equal(stack.pop(), name, `</${name}> closes the wrong element`);
    else if (!selfClose) {
      if (!stack.length) roots++;
      stack.push(name as string);
    } else if (!stack.length) roots++;
  }
  assert.deepEqual(stack, [], "elements left open");
  assert.equal(roots, 1, "one root element");
}

const T0 = Date.parse("2026-11-20T10:00:00Z");
const data: PlotData = {
  title: "archive <last hour> & more",
  xKind: "time",
  xLabel: "time (UTC)",
  series: [
    {
      name: "RING:DCCT:CURRENT",
      units: "mA",
      points: Array.from({ length: 300 }, (_, i) => [T0 + i * 1000, 300 - (i === 120 ? 5 : 0)]),
    },
    {
      name: 'EVIL"/><script>alert(1)</script>\x1b[2J',
      units: "<u>",
      points: [[T0, 1], [T0 + 60_000, 7], [T0 + 120_000, 3]],
    },
  ],
};

Deno.test("the SVG is well-formed and holds one line per series with its minimum and maximum marked", () => {
  const svg = chartSvg(data);
  assertWellFormed(svg);
  assert.equal(svg.match(/<polyline class="series"/g)?.length, 2);
  assert.match(svg, /data-name="RING:DCCT:CURRENT"/);
  assert.equal(svg.match(/<circle class="max"/g)?.length, 2);
  assert.equal(svg.match(/<circle class="min"/g)?.length, 2);
  assert.match(svg, />min 295</);
  assert.match(svg, />max 7</);
  assert.match(svg, />RING:DCCT:CURRENT \[mA\]</);
  assert.match(svg, />10:00:00</, "time labels in UTC");
});

Deno.test("outside text in the SVG is escaped: a name cannot add an element or a control character", () => {
  const svg = chartSvg(data);
  assert.ok(!svg.includes("<script"));
  assert.match(svg, /EVIL&quot;\/&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;\\x1b\[2J/);
  assert.match(svg, /archive &lt;last hour&gt; &amp; more/);
});

Deno.test("a single point or a flat series still gives a drawable SVG", () => {
  const flat: PlotData = {
    title: "flat",
    xKind: "value",
    xLabel: "phase",
    series: [{ name: "A", units: "", points: [[1, 5]] }],
  };
  const svg = chartSvg(flat);
  assertWellFormed(svg);
  assert.ok(!/NaN|Infinity/.test(svg));
});

Deno.test("axis ticks are round values covering the range", () => {
  assert.deepEqual(ticks(0, 10), [0, 2, 4, 6, 8, 10]);
  assert.deepEqual(ticks(99.91, 100.07, 4), [99.95, 100, 100.05]);
  const t = timeTicks(T0 + 1234, T0 + 3_600_000);
  assert.ok(t.length >= 2 && t.length <= 6);
  assert.ok(t.every((x) => x % 60_000 === 0));
});
