// The pure-JS tokenizers fsgate is compared with. They are devDependencies; a missing one
// is reported, not fatal.

/** Returns { name: { label, version, count(text), reset?() } } for each peer installed. */
export async function loadPeers() {
  const peers = {}
  try {
    const { Tiktoken } = await import('js-tiktoken/lite')
    const { default: o200k } = await import('js-tiktoken/ranks/o200k_base')
    const enc = new Tiktoken(o200k)
    peers['js-tiktoken'] = {
      label: 'js-tiktoken (o200k_base)',
      version: await version('js-tiktoken'),
      count: (text) => enc.encode(text).length,
    }
  } catch (err) {
    peers['js-tiktoken'] = { missing: String(err?.message ?? err) }
  }
  try {
    const gt = await import('gpt-tokenizer/encoding/o200k_base')
    peers['gpt-tokenizer'] = {
      label: 'gpt-tokenizer (o200k_base)',
      version: await version('gpt-tokenizer'),
      count: (text) => gt.countTokens(text),
      reset: () => gt.clearMergeCache(),
    }
  } catch (err) {
    peers['gpt-tokenizer'] = { missing: String(err?.message ?? err) }
  }
  return peers
}

async function version(name) {
  try {
    const { readFileSync } = await import('node:fs')
    const url = new URL(`../node_modules/${name}/package.json`, import.meta.url)
    return JSON.parse(readFileSync(url, 'utf8')).version ?? '?'
  } catch {
    return '?'
  }
}
