import type { Tool } from '../tool.js'
import { applyPatchTool } from './apply-patch.js'
import { bashTool } from './bash-session.js'
import { editTool } from './edit.js'
import { fileInfoTool } from './file-info.js'
import { gitTool } from './git.js'
import { globTool } from './glob.js'
import { grepTool } from './grep.js'
import { listTool } from './list.js'
import { notebookTool } from './notebook.js'
import { pdfTool } from './pdf.js'
import { readTool } from './read.js'
import { semanticTool } from './semantic.js'
import { shellTool } from './shell.js'
import { shellCommandTool } from './shell-command.js'
import { taskOutputTool } from './task-output.js'
import { taskStopTool } from './task-stop.js'
import { textEditorTool } from './text-editor.js'
import { writeTool } from './write.js'

/** Every tool, in the order definitions list them. */
export const TOOLS: ReadonlyArray<Tool<never>> = [
  readTool,
  writeTool,
  editTool,
  notebookTool,
  globTool,
  grepTool,
  listTool,
  fileInfoTool,
  semanticTool,
  pdfTool,
  gitTool,
  shellTool,
  taskOutputTool,
  taskStopTool,
  // The tools the models' makers define (SPEC §8.2): the anthropic and codex dialects.
  textEditorTool,
  bashTool,
  applyPatchTool,
  shellCommandTool,
] as unknown as ReadonlyArray<Tool<never>>
