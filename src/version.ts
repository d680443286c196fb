/** The program's version; kept in step with deno.json by a test. */
export const VERSION = "0.1.0";
