//! Content hashes, as 32 lowercase hex digits.
//!
//! fsgate's content hash is a two-level xxh3-128: the data is cut into 1 MiB chunks,
//! each chunk is hashed, and the hash is the xxh3-128 of the chunk hashes (16 bytes
//! each, little endian) in order; no data, no chunks. The chunks can be hashed on
//! several threads at once, and a streamed hash gives the same value as a parallel one.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use rayon::prelude::*;
use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use crate::cancel::Cancel;
use crate::error::{Error, ErrorKind, Result};

/// The chunk size of the content hash.
pub const HASH_CHUNK: usize = 1 << 20;

/// Formats a 128-bit hash as 32 lowercase hex digits.
pub fn hex128(hash: u128) -> String {
    format!("{hash:032x}")
}

/// A streaming content hasher: feed bytes in pieces of any size.
#[derive(Clone, Default)]
pub struct ContentHasher {
    outer: Xxh3,
    chunk: Xxh3,
    filled: usize,
}

impl ContentHasher {
    /// A hasher that has seen nothing.
    pub fn new() -> ContentHasher {
        ContentHasher::default()
    }

    /// Adds bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = (HASH_CHUNK - self.filled).min(bytes.len());
            self.chunk.update(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled == HASH_CHUNK {
                self.outer.update(&self.chunk.digest128().to_le_bytes());
                self.chunk.reset();
                self.filled = 0;
            }
        }
    }

    /// The content hash of everything added.
    pub fn finish(mut self) -> u128 {
        if self.filled > 0 {
            self.outer.update(&self.chunk.digest128().to_le_bytes());
        }
        self.outer.digest128()
    }
}

/// Combines chunk hashes, in order, into the content hash.
pub(crate) fn combine(chunk_hashes: impl IntoIterator<Item = u128>) -> u128 {
    let mut outer = Xxh3::new();
    for h in chunk_hashes {
        outer.update(&h.to_le_bytes());
    }
    outer.digest128()
}

/// The content hash of a byte slice, its chunks hashed in parallel.
pub fn hash_bytes(bytes: &[u8]) -> u128 {
    let hashes: Vec<u128> = bytes.par_chunks(HASH_CHUNK).map(xxh3_128).collect();
    combine(hashes)
}

/// The content hash of everything `reader` yields.
pub fn hash_reader<R: Read>(mut reader: R, cancel: &Cancel) -> Result<(u128, u64)> {
    let mut hasher = ContentHasher::new();
    let mut buf = vec![0u8; HASH_CHUNK];
    let mut size = 0u64;
    loop {
        cancel.check()?;
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                size += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(e)),
        }
    }
    Ok((hasher.finish(), size))
}

/// The content hash and size of a file, its chunks read and hashed in parallel.
pub fn hash_file(path: &Path, cancel: &Cancel) -> Result<(u128, u64)> {
    let (file, meta) = crate::confine::open_regular(path).map_err(|e| e.with_path(path))?;
    let hash = hash_open_file(&file, meta.len(), cancel).map_err(|e| e.with_path(path))?;
    Ok((hash, meta.len()))
}

/// The content hash of the first `size` bytes of an open file, chunks in parallel.
pub(crate) fn hash_open_file(file: &File, size: u64, cancel: &Cancel) -> Result<u128> {
    Ok(combine(scan(file, size, false, cancel)?.iter().map(|c| c.hash)))
}

/// What one pass learned about one chunk of a file.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChunkFacts {
    /// xxh3-128 of the chunk.
    pub(crate) hash: u128,
    /// `\n` bytes in the chunk (when lines were counted).
    pub(crate) newlines: u64,
    /// Offset in the chunk just past its first `\n`, if it has one.
    pub(crate) after_first_newline: Option<u32>,
    /// The chunk's last byte.
    pub(crate) last_byte: u8,
}

/// Reads the first `size` bytes of `file` once, on all the pool's threads (each reading
/// its own run of consecutive chunks), and returns the facts of every chunk in order.
pub(crate) fn scan(file: &File, size: u64, count_lines: bool, cancel: &Cancel) -> Result<Vec<ChunkFacts>> {
    let chunks = size.div_ceil(HASH_CHUNK as u64) as usize;
    let runs = rayon::current_num_threads().clamp(1, chunks.max(1));
    let per_run = chunks.div_ceil(runs).max(1);
    let results: Vec<Result<Vec<ChunkFacts>>> = (0..runs)
        .into_par_iter()
        .map(|run| {
            let first = run * per_run;
            let last = ((run + 1) * per_run).min(chunks);
            let mut buf = vec![0u8; HASH_CHUNK];
            let mut out = Vec::with_capacity(last.saturating_sub(first));
            for k in first..last {
                cancel.check()?;
                let start = k as u64 * HASH_CHUNK as u64;
                let len = (size - start).min(HASH_CHUNK as u64) as usize;
                let data = &mut buf[..len];
                read_exact_at(file, data, start)?;
                let mut facts = ChunkFacts { hash: xxh3_128(data), last_byte: data[len - 1], ..Default::default() };
                if count_lines {
                    facts.after_first_newline = memchr::memchr(b'\n', data).map(|p| p as u32 + 1);
                    facts.newlines = memchr::memchr_iter(b'\n', data).count() as u64;
                }
                out.push(facts);
            }
            Ok(out)
        })
        .collect();
    let mut all = Vec::with_capacity(chunks);
    for run in results {
        all.extend(run?);
    }
    Ok(all)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).map_err(changed)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(changed(std::io::ErrorKind::UnexpectedEof.into())),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(e)),
        }
    }
    Ok(())
}

fn changed(err: std::io::Error) -> Error {
    if err.kind() == std::io::ErrorKind::UnexpectedEof {
        Error::new(ErrorKind::Io, "the file got shorter while it was being read")
    } else {
        Error::io(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tmp, wfile};

    /// Streamed, one-shot, parallel-file and scan hashes agree at every chunk edge.
    #[test]
    fn every_way_of_hashing_agrees() {
        let dir = tmp();
        for len in [0, 1, HASH_CHUNK - 1, HASH_CHUNK, HASH_CHUNK + 1, 3 * HASH_CHUNK + HASH_CHUNK / 2] {
            let data: Vec<u8> = (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
            let one_shot = hash_bytes(&data);
            for piece in [1usize, 7, 4096, HASH_CHUNK + 3] {
                let mut h = ContentHasher::new();
                data.chunks(piece).for_each(|c| h.update(c));
                assert_eq!(h.finish(), one_shot, "len {len}, pieces of {piece}");
            }
            let (streamed, n) = hash_reader(&data[..], &Cancel::new()).unwrap();
            assert_eq!((streamed, n), (one_shot, len as u64));
            let p = wfile(&dir, &format!("f{len}"), &data);
            assert_eq!(hash_file(&p, &Cancel::new()).unwrap(), (one_shot, len as u64));
        }
        assert_eq!(hex128(1).len(), 32);
    }

    #[test]
    fn scan_counts_lines_per_chunk() {
        let dir = tmp();
        let mut data = vec![b'x'; 2 * HASH_CHUNK + 10];
        data[5] = b'\n';
        data[HASH_CHUNK + 1] = b'\n';
        data[HASH_CHUNK + 2] = b'\n';
        let p = wfile(&dir, "lines", &data);
        let file = File::open(&p).unwrap();
        let facts = scan(&file, data.len() as u64, true, &Cancel::new()).unwrap();
        assert_eq!(facts.iter().map(|c| c.newlines).collect::<Vec<_>>(), vec![1, 2, 0]);
        assert_eq!(facts.iter().map(|c| c.after_first_newline).collect::<Vec<_>>(), vec![Some(6), Some(2), None]);
        assert_eq!(combine(facts.iter().map(|c| c.hash)), hash_bytes(&data));
    }

    #[test]
    fn a_file_that_shrinks_is_an_error() {
        let dir = tmp();
        let p = wfile(&dir, "short", b"abc");
        let file = File::open(&p).unwrap();
        assert!(scan(&file, 10, false, &Cancel::new()).is_err());
    }
}
