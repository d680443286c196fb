/**
 * The TANGO adapter against a REST server that answers wrongly: values in
 * another order, values that do not fit the attribute's type, HTML pages and
 * malformed objects. Each is reported as what the server did, naming the
 * attribute, and never as a VALID reading.
 */
import assert from "node:assert/strict";
import { createTango } from "../../../src/adapters/tango/mod.ts";
import { basicAuth } from "../../../src/adapters/http.ts";
import { FakeHttp } from "../../support/facility/fake_http.ts";
import { HAS_TANGO, startTango } from "../../support/facility/tango_server.ts";

const D = "sys/tg_test/1";
const INFO = [
  {
    name: "double_scalar",
    info: {
      name: "double_scalar",
      data_type: "DevDouble",
      data_format: "SCALAR",
      writable: "READ_WRITE",
      unit: "mm",
    },
  },
  {
    name: "long_scalar",
    info: { name: "long_scalar", data_type: "DevLong", data_format: "SCALAR", writable: "READ" },
  },
  {
    name: "string_scalar",
    info: {
      name: "string_scalar",
      data_type: "DevString",
      data_format: "SCALAR",
      writable: "READ_WRITE",
    },
  },
  {
    name: "boolean_scalar",
    info: {
      name: "boolean_scalar",
      data_type: "DevBoolean",
      data_format: "SCALAR",
      writable: "READ",
    },
  },
  {
    name: "double_spectrum",
    info: {
      name: "double_spectrum",
      data_type: "DevDouble",
      data_format: "SPECTRUM",
      writable: "READ",
    },
  },
];

type Answer = (attrs: string[]) => Response;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function value(name: string, v: unknown, quality: unknown = "ATTR_VALID") {
  return { name, value: v, quality, timestamp: 1_700_000_000_000 };
}

function tangoWith(answer: Answer, state?: () => Response) {
  const server = new FakeHttp((url) => {
    const path = url.pathname;
    if (path.endsWith(`/devices/${D}/attributes`)) return json(INFO);
    if (path.endsWith(`/devices/${D}/attributes/value`)) {
      return answer(url.searchParams.getAll("attr"));
    }
    if (path.endsWith(`/devices/${D}/state`)) {
      return state?.() ?? json({ state: "RUNNING", status: "The device is in RUNNING state." });
    }
    return json({ errors: [{ reason: "API_DeviceNotFound", description: "no device" }] }, 404);
  });
  const cs = createTango({
    restUrl: `${server.origin}/tango/rest`,
    tangoHost: "localhost:10000",
    timeoutMs: 2_000,
  });
  return {
    cs,
    base: `${server.origin}/tango/rest`,
    async [Symbol.asyncDispose]() {
      await cs.close();
      await server.close();
    },
  };
}

Deno.test("a TANGO reply in another order gives each attribute its own value", async () => {
  await using t = tangoWith((attrs) =>
    json(
      attrs.slice().reverse().map((a) =>
        a === "double_scalar"
          ? value(a, 1.5)
          : a === "long_scalar"
          ? value(a, 42)
          : value(a, "beam on")
      ),
    )
  );
  const r = await t.cs.read([`${D}/double_scalar`, `${D}/long_scalar`, `${D}/string_scalar`]);
  assert.deepEqual(r.map((x) => [x.device, x.value, x.ok]), [
    [`${D}/double_scalar`, 1.5, true],
    [`${D}/long_scalar`, 42, true],
    [`${D}/string_scalar`, "beam on", true],
  ]);
});

Deno.test("attribute names in the reply match whatever their case", async () => {
  await using t = tangoWith((attrs) =>
    json(attrs.map((a) => value(a.toUpperCase(), a === "long_scalar" ? 7 : 2.5)).reverse())
  );
  const r = await t.cs.read([`${D}/double_scalar`, `${D}/long_scalar`]);
  assert.deepEqual(r.map((x) => x.value), [2.5, 7]);
});

Deno.test("an attribute missing from the reply fails alone, it never takes a neighbour's value", async () => {
  await using t = tangoWith(() => json([value("long_scalar", 42), value("string_scalar", "x")]));
  const r = await t.cs.read([`${D}/double_scalar`, `${D}/long_scalar`]);
  assert.equal(r[0]?.ok, false);
  assert.equal(r[0]?.value, null);
  assert.match(r[0]?.error ?? "", /no value in the reply/);
  assert.equal(r[1]?.value, 42);
});

for (
  const [attr, sent, expected] of [
    ["double_scalar", "1.5abc", /DevDouble attribute, expected a number/],
    ["long_scalar", "42", /DevLong attribute, expected an integer/],
    ["long_scalar", "NaN", /DevLong attribute, expected an integer/],
    [
      "long_scalar",
      1.5,
      /the number 1.5 for a DevLong attribute, expected an integer in -2147483648..2147483647/,
    ],
    ["long_scalar", 2 ** 40, /for a DevLong attribute, expected an integer in/],
    ["double_scalar", { v: 1 }, /an object for a DevDouble/],
    ["double_scalar", true, /boolean true for a DevDouble/],
    ["string_scalar", 12, /DevString attribute, expected text/],
    ["boolean_scalar", "true", /DevBoolean attribute, expected true or false/],
    ["double_spectrum", [1, "2x", 3], /"2x" in a DevDouble SPECTRUM, expected numbers/],
    ["double_spectrum", 4, /for a SPECTRUM attribute, expected an array/],
  ] as const
) {
  Deno.test(`a ${attr} sent as ${JSON.stringify(sent)} is an error naming the attribute, not VALID`, async () => {
    await using t = tangoWith((attrs) => json(attrs.map((a) => value(a, a === attr ? sent : 1))));
    const [r, other] = await t.cs.read([`${D}/${attr}`, `${D}/double_scalar`]);
    assert.equal(r?.ok, false, JSON.stringify(r));
    assert.equal(r?.value, null);
    assert.equal(r?.severity, "INVALID");
    assert.match(r?.error ?? "", expected);
    assert.match(r?.error ?? "", /^TANGO REST sent/);
    if (attr !== "double_scalar") assert.equal(other?.ok, true);
  });
}

Deno.test("a value with a quality TANGO does not have is an error, not a reading of some severity", async () => {
  await using t = tangoWith((attrs) => json(attrs.map((a) => value(a, 1.5, "VALID"))));
  const [r] = await t.cs.read([`${D}/double_scalar`]);
  assert.equal(r?.ok, false);
  assert.match(r?.error ?? "", /TANGO REST sent the quality "VALID", expected one of ATTR_VALID/);
});

Deno.test("a DevDouble sent as the text NaN is a non-finite number, as TANGO REST writes it", async () => {
  await using t = tangoWith((attrs) => json(attrs.map((a) => value(a, "NaN"))));
  const [r] = await t.cs.read([`${D}/double_scalar`]);
  assert.equal(r?.ok, true);
  assert.ok(Number.isNaN(r?.value));
});

Deno.test("an HTML page where TANGO REST values were expected is reported as such, in one line", async () => {
  await using t = tangoWith(() =>
    new Response("<html><body><h1>502 Bad Gateway</h1></body></html>", {
      headers: { "content-type": "text/html" },
    })
  );
  const [r] = await t.cs.read([`${D}/double_scalar`]);
  assert.equal(r?.ok, false);
  assert.equal(
    r?.error,
    `TANGO REST at ${t.base} answered an HTML page (status 200) where JSON was expected; check the URL in the config`,
  );
});

Deno.test("an HTML error page with an error status says HTML page, not its markup", async () => {
  await using t = tangoWith(() =>
    new Response("<!DOCTYPE html><html><body>Bad gateway</body></html>", { status: 502 })
  );
  const [r] = await t.cs.read([`${D}/double_scalar`]);
  assert.match(r?.error ?? "", /answered HTTP 502 for .* with an HTML page$/);
  assert.doesNotMatch(r?.error ?? "", /</);
});

Deno.test("malformed TANGO replies name the service, what it sent and what was expected", async () => {
  const cases: [Answer, RegExp][] = [
    [
      () => json({ name: "double_scalar", value: 1 }),
      /answered an object, expected a list of sys\/tg_test\/1's attribute values/,
    ],
    [
      (a) => json(a.map((n) => value(n, 1, 5))),
      /answered a list whose \[0\]\.quality is the number 5, expected/,
    ],
    [() => json("RUNNING"), /answered the text "RUNNING", expected/],
    [
      () => new Response('{"name": ', { status: 200 }),
      /answered text that is not JSON \(status 200\): \{"name":/,
    ],
    [
      () => new Response("", { status: 200 }),
      /answered nothing, expected a list/,
    ],
  ];
  for (const [answer, expected] of cases) {
    await using t = tangoWith(answer);
    const [r] = await t.cs.read([`${D}/double_scalar`]);
    assert.equal(r?.ok, false);
    assert.match(r?.error ?? "", expected);
    assert.match(
      r?.error ?? "",
      new RegExp(`^TANGO REST at ${t.base.replace(/[./]/g, "\\$&")} answered`),
    );
    assert.doesNotMatch(r?.error ?? "", /is not a function|Unexpected token|undefined/);
  }
});

Deno.test("a state reply without a state is reported, not read as the text undefined", async () => {
  await using t = tangoWith(() => json([]), () => json({ status: "fine" }));
  const [r] = await t.cs.read([D]);
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /answered an object whose state is missing, expected the state of sys\/tg_test\/1/,
  );
});

Deno.test("an error element without a name stands for the attribute at its position", async () => {
  await using t = tangoWith(() =>
    json([{
      errors: [{ reason: "API_AttrNotFound", desc: "no attribute double_scalar" }],
      quality: "FAILURE",
    }, value("long_scalar", 3)])
  );
  const r = await t.cs.read([`${D}/double_scalar`, `${D}/long_scalar`]);
  assert.equal(r[0]?.error, "API_AttrNotFound: no attribute double_scalar");
  assert.equal(r[1]?.value, 3);
});

Deno.test({
  name:
    "TangoTest: attributes of five types read in one request each get a value of their own type",
  ignore: !HAS_TANGO && !Deno.env.get("CI"),
  async fn() {
    await using server = await startTango();
    const cs = createTango({
      restUrl: server.restUrl,
      tangoHost: server.tangoHost,
      authorization: basicAuth((n) => server.env[n], "TANGO_REST_USER", "TANGO_REST_PASSWORD"),
    });
    const names = [
      "string_scalar",
      "boolean_scalar",
      "long_scalar",
      "double_scalar",
      "short_scalar",
    ];
    const r = await cs.read(names.map((n) => `${D}/${n}`));
    await cs.close();
    assert.deepEqual(r.map((x) => [x.ok, typeof x.value]), [
      [true, "string"],
      [true, "boolean"],
      [true, "number"],
      [true, "number"],
      [true, "number"],
    ]);
  },
});
