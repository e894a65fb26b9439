/** The one result shape every tool call returns (MCP's CallToolResult, plus `data` and `error`). */

export type ContentBlock = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }

export interface ToolResult {
  isError: boolean
  content: ContentBlock[]
  data?: Record<string, unknown>
  error?: { code: string; errorCode?: number; nonce?: string; retryAfterMs?: number }
}

/** What a tool's `run` returns on success; the wrapper turns it into a ToolResult. */
export interface ToolOutput<D extends Record<string, unknown> = Record<string, unknown>> {
  content: ContentBlock[]
  data?: D
}

export function text(t: string): ContentBlock {
  return { type: 'text', text: t }
}
