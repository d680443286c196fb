/**
 * What a command line asks for, as the command table (`commands_table.ts`)
 * builds it and `cli/main.ts` dispatches it.
 *
 * @module
 */

/** One parsed command; `kind` names it. */
export type Command =
  | { kind: "repl" }
  | { kind: "ask"; question?: string }
  | { kind: "get"; devices: string[] }
  | {
    kind: "search";
    pattern: string;
    /** Forced reading of the text (`--pattern`, `--words`); auto otherwise. */
    mode: "auto" | "pattern" | "informal";
    subsystem?: string;
    writable?: boolean;
    limit: number;
    offset: number;
  }
  | {
    kind: "logs";
    source: "elog" | "alarm" | "archive";
    from?: string;
    to?: string;
    devices: string[];
    text?: string;
    severity?: string;
    limit: number;
  }
  | { kind: "plan_show"; file: string; reusable: boolean }
  | { kind: "plan_run"; file: string; approvedHash?: string; elog?: "post" | "skip" }
  | { kind: "plan_recover"; run?: string; dismiss: boolean; elog?: "post" | "skip" }
  | { kind: "audit_verify"; file?: string }
  | { kind: "permissions" }
  | { kind: "config_show" }
  | { kind: "index"; action: "stats" | "refresh" }
  | { kind: "help"; command?: string }
  | { kind: "version" }
  | { kind: "exec"; file: string; timeoutS?: number }
  | { kind: "scripts"; action: "list"; keyword?: string }
  | { kind: "scripts"; action: "run"; name: string; args: string[] }
  | { kind: "display"; name?: string; macros: string[] }
  | { kind: "plot"; args: Record<string, unknown> }
  | {
    kind: "elog";
    action: "list" | "show" | "post" | "skip" | "shift";
    /** Draft ids (or files) for show, post and skip. */
    drafts: string[];
    from?: string;
    to?: string;
    /** shift: post or skip without asking. */
    choice?: "post" | "skip";
  };
