/**
 * The rg differential suite (search-rg.test.ts) again, with the live index of every
 * workspace built and ready before its searches (issue 20): the same trees and inputs,
 * the same expected outputs, and a check at the end that the index answered them.
 */
process.env.FSGATE_TEST_INDEX = 'on'
await import('./search-rg.test.js')
