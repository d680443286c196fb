/**
 * What /cost says: the session's tokens, then each model's tokens (the
 * conversation, its summaries and the sub-agents together) priced at that
 * model's own `price_in` / `price_out`, and the total.
 *
 * @module
 */
import type { Session } from "../../agent/session.ts";
import type { RunInfo } from "../../agent/subagents/manager.ts";
import { type Config, ConfigError, resolveModel } from "../../config/mod.ts";
import { addUsage, type Usage, ZERO_USAGE } from "../../llm/types.ts";
import type { App } from "../../app/app.ts";
import { sessionCostText } from "./slash_sessions.ts";
import { untrusted } from "../../util/untrusted_text.ts";

/** Tokens of the session and its sub-agents, by configured model name. */
interface ModelUsage {
  byModel: Map<string, Usage>;
  /** Tokens saved by an older version, with no model (or no in/out split) recorded. */
  unrecorded: Usage;
}

/** Sums the session's usage and its runs' by model; `current` is listed even when unused. */
function modelUsage(session: Session, runs: readonly RunInfo[], current: string): ModelUsage {
  const byModel = new Map(session.usageByModel);
  let unrecorded = session.unattributedUsage;
  for (const r of runs) {
    if (r.usage) byModel.set(r.model, addUsage(byModel.get(r.model) ?? ZERO_USAGE, r.usage));
    else unrecorded = addUsage(unrecorded, { ...ZERO_USAGE, totalTokens: r.tokens });
  }
  if (!byModel.has(current)) byModel.set(current, { ...ZERO_USAGE });
  return { byModel, unrecorded };
}

/** The /cost text. */
export function costText(app: App): string {
  let text = `  tokens this session: ${tokens(app.session.usage)}\n` + sessionCostText(app);
  const { byModel, unrecorded } = modelUsage(
    app.session,
    app.agents.list(),
    app.modelInfo.name,
  );
  text += "  by model (the conversation and sub-agents together):\n";
  let usd = 0;
  const leftOut: string[] = [];
  for (const [key, used] of byModel) {
    // Names come from the config and from session files on disk: shown escaped.
    const name = untrusted(key);
    text += `    ${name}: ${tokens(used)}\n`;
    const price = pricesOf(app.loaded.config, key);
    if (price) {
      const cost = (used.promptTokens * price.in + used.completionTokens * price.out) / 1e6;
      usd += cost;
      text += `      cost at ${name}'s prices: $${cost.toFixed(4)}\n`;
    } else {
      leftOut.push(`${name} (no prices)`);
      text +=
        `      no prices configured for ${name} (price_in / price_out in [llm.models.${name}])\n`;
    }
  }
  if (unrecorded.totalTokens) {
    leftOut.push(`${unrecorded.totalTokens} tokens not split by model`);
    text += `    not split by model (saved by an older version): ${tokens(unrecorded)}\n`;
  }
  text += `  total cost: $${usd.toFixed(4)}${
    leftOut.length ? `, leaving out ${leftOut.join(" and ")}` : ""
  }\n`;
  return text;
}

/** Counts as the endpoint reported them, escaped: a hostile endpoint may send text for a number. */
function tokens(u: Usage): string {
  return untrusted(`${u.promptTokens} in · ${u.completionTokens} out · ${u.totalTokens} total`);
}

/** A named model's prices (USD per million tokens); undefined when it has none, or is not configured now. */
function pricesOf(config: Config, name: string): { in: number; out: number } | undefined {
  try {
    const m = resolveModel(config, name);
    if (m.priceIn === undefined && m.priceOut === undefined) return undefined;
    return { in: m.priceIn ?? 0, out: m.priceOut ?? 0 };
  } catch (e) {
    if (e instanceof ConfigError) return undefined;
    throw e;
  }
}
