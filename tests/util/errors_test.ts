import assert from "node:assert/strict";
import { asError, errorMessage } from "../../src/util/errors.ts";

Deno.test("the message of anything thrown: an Error's, an error-like object's, or its text", () => {
  assert.equal(errorMessage(new RangeError("out of range")), "out of range");
  assert.equal(errorMessage(new DOMException("aborted", "AbortError")), "aborted");
  assert.equal(errorMessage({ message: "from a library" }), "from a library");
  assert.equal(errorMessage("a thrown string"), "a thrown string");
  assert.equal(errorMessage({ message: 3 }), "[object Object]");
  assert.equal(errorMessage(undefined), "undefined");
});

Deno.test("anything thrown becomes an Error, and an Error stays itself", () => {
  const e = new TypeError("bad");
  assert.equal(asError(e), e);
  const wrapped = asError("a thrown string");
  assert.ok(wrapped instanceof Error);
  assert.equal(wrapped.message, "a thrown string");
});
