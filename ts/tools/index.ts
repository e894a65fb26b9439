/** Every tool, in the order definitions list them. */
import { readTool } from './read.js'
import type { Tool } from '../tool.js'

export const TOOLS: ReadonlyArray<Tool<never>> = [readTool as unknown as Tool<never>]
