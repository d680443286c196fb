/**
 * Assembles the system prompt from its parts. Pure: the CLI reads the files.
 *
 * @module
 */

export interface ContextFile {
  /** Shown to the model as the section's title. */
  path: string;
  text: string;
}

export interface SystemPromptParts {
  base: string;
  /** The facility's AGENT.md, when present. */
  agentMd?: ContextFile;
  /** Markdown files from the configured context directories. */
  files: ContextFile[];
  /** Current time, so the model can resolve "last night". */
  nowIso: string;
}

/** The system prompt: base prompt, then facility knowledge, then context files. */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const sections = [parts.base.trim(), `Current time: ${parts.nowIso} (UTC).`];
  if (parts.agentMd) {
    sections.push(`# Facility knowledge (${parts.agentMd.path})\n\n${parts.agentMd.text.trim()}`);
  }
  for (const f of parts.files) sections.push(`# Context: ${f.path}\n\n${f.text.trim()}`);
  return sections.join("\n\n");
}
