export { createToolkit, Toolkit, Session } from './toolkit.js'
export type { ToolkitOptions, SessionOptions, CallOptions, DefinitionsOptions, PolicyOptions, IndexMode, IndexStatus } from './toolkit.js'
export type { ToolResult, ToolOutput, ContentBlock } from './result.js'
export type { ToolDefinition, DefinitionFormat, JsonSchema } from './definitions.js'
export type { Limits } from './limits.js'
export { DEFAULT_LIMITS, MIN_RESULT_TOKENS } from './limits.js'
export type { PresetName, Dialect, Autonomy, OutsideWorkspace, LineStyle } from './policy/presets.js'
export { DIALECTS } from './policy/presets.js'
export type { PermissionRequest, PermissionHandler } from './policy/consent.js'
export type { HistoryEntry } from './contract/history.js'
export type { ReadInput } from './tools/read.js'
export type { WriteInput } from './tools/write.js'
export type { EditInput } from './tools/edit.js'
export type { GlobInput } from './tools/glob.js'
export type { ContentSearchInput, OutputMode } from './tools/grep.js'
export type { SemanticInput, Backend } from './tools/semantic.js'
export type { PdfReadInput } from './tools/pdf.js'
export type { ShellInput } from './tools/shell.js'
export type { ListInput, ListedEntry } from './tools/list.js'
export type { FileInfoInput } from './tools/file-info.js'
export type { NotebookEditInput, CellEditMode } from './tools/notebook.js'
export type { GitInput, GitOperation, StashAction } from './tools/git.js'
export type { ApplyPatchInput } from './tools/apply-patch.js'
export { APPLY_PATCH_GRAMMAR } from './tools/apply-patch.js'
export type { TextEditorInput } from './tools/text-editor.js'
export type { BashInput } from './tools/bash-session.js'
export type { ShellCommandInput } from './tools/shell-command.js'
export type { UndoResult } from './contract/undo-patch.js'
export type { ApprovalRequest, ApprovalHandler } from './tool.js'
export type { OtpOptions } from './policy/otp.js'
export type { SandboxBackend, SandboxKind } from './process/sandbox.js'
export { totp } from './policy/otp.js'
export { classifyCommand } from './policy/risk.js'
export type { Risk, Classification, RatedCommand } from './policy/risk.js'
export {
  ERROR_CODES,
  FsgateError,
  MaxFileReadTokenExceededError,
  InvalidInputError,
  NotFoundError,
  PathOutsideWorkspaceError,
  BlockedDeviceError,
  FileTooLargeError,
  AbortedError,
  NotReadError,
  StaleFileError,
  PermissionRequiredError,
  EditMatchError,
} from './errors.js'
export type { ErrorCode } from './errors.js'
export { countTokens, hashBuffer, hashFile } from './utils.js'
// SDK adapters (Anthropic, OpenAI Chat Completions and Responses, Vercel AI SDK); no SDK is a dependency.
export { anthropicTools, runAnthropicToolUses, toAnthropicContent } from './adapters/anthropic.js'
export type {
  AnthropicTool,
  AnthropicAnyTool,
  AnthropicTextEditorTool,
  AnthropicBashTool,
  AnthropicToolResultBlock,
  AnthropicToolResultContent,
  AnthropicImageMediaType,
  AnthropicContentBlockLike,
  AnthropicToolsOptions,
  RunAnthropicOptions,
} from './adapters/anthropic.js'
export { openaiChatTools, runOpenAIChatToolCalls, openaiResponsesTools, runOpenAIResponsesCalls, toResponsesOutput } from './adapters/openai.js'
export type {
  OpenAIChatTool,
  OpenAIChatToolCallLike,
  OpenAIChatToolMessage,
  OpenAIChatImageMessage,
  OpenAIChatResultMessage,
  RunOpenAIChatOptions,
  OpenAIResponsesTool,
  OpenAIResponseItemLike,
  OpenAIFunctionCallOutput,
  OpenAIFunctionCallOutputContent,
  OpenAIResponsesAnyTool,
  OpenAIResponsesToolsOptions,
  OpenAICustomTool,
  OpenAIApplyPatchTool,
  OpenAIShellTool,
  OpenAIResponsesOutput,
  OpenAICustomToolCallOutput,
  OpenAIApplyPatchCallOutput,
  OpenAIShellCallOutput,
  OpenAIShellCommandOutput,
  OpenAIToolsOptions,
  RunOpenAIOptions,
} from './adapters/openai.js'
export { aiSdkTools, toAiSdkOutput } from './adapters/ai-sdk.js'
export type { AiSdkTool, AiSdkFunctions, AiSdkModelOutput, AiSdkToolsOptions } from './adapters/ai-sdk.js'
