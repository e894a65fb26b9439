export { createToolkit, Toolkit, Session } from './toolkit.js'
export type { ToolkitOptions, SessionOptions, CallOptions, DefinitionsOptions, PolicyOptions } from './toolkit.js'
export type { ToolResult, ToolOutput, ContentBlock } from './result.js'
export type { ToolDefinition, DefinitionFormat, JsonSchema } from './definitions.js'
export type { Limits } from './limits.js'
export { DEFAULT_LIMITS } from './limits.js'
export type { PresetName, Dialect, Autonomy } from './policy/presets.js'
export type { ReadInput } from './tools/read.js'
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
} from './errors.js'
export type { ErrorCode } from './errors.js'
export { countTokens, hashBuffer, hashFile } from './utils.js'
