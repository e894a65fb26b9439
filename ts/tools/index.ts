import type { Tool } from '../tool.js'
import { editTool } from './edit.js'
import { gitTool } from './git.js'
import { globTool } from './glob.js'
import { grepTool } from './grep.js'
import { pdfTool } from './pdf.js'
import { readTool } from './read.js'
import { semanticTool } from './semantic.js'
import { shellTool } from './shell.js'
import { writeTool } from './write.js'

/** Every tool, in the order definitions list them. */
export const TOOLS: ReadonlyArray<Tool<never>> = [readTool, writeTool, editTool, globTool, grepTool, semanticTool, pdfTool, gitTool, shellTool] as unknown as ReadonlyArray<Tool<never>>
