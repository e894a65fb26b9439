//! Content hashes: xxh3-128, streamed, as 32 lowercase hex digits.

use std::io::Read;
use std::path::Path;

use crate::cancel::Cancel;
use crate::error::{Error, Result};

/// Formats a 128-bit hash as 32 lowercase hex digits.
pub fn hex128(hash: u128) -> String {
    format!("{hash:032x}")
}

/// The xxh3-128 of a byte slice.
pub fn hash_bytes(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// The xxh3-128 of everything `reader` yields, read in 1 MiB chunks.
pub fn hash_reader<R: Read>(mut reader: R, cancel: &Cancel) -> Result<(u128, u64)> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
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
    Ok((hasher.digest128(), size))
}

/// The xxh3-128 and size of a file.
pub fn hash_file(path: &Path, cancel: &Cancel) -> Result<(u128, u64)> {
    let (file, _) = crate::confine::open_regular(path).map_err(|e| e.with_path(path))?;
    hash_reader(file, cancel).map_err(|e| e.with_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_equals_one_shot() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7) as u8).collect();
        let (h, n) = hash_reader(&data[..], &Cancel::new()).unwrap();
        assert_eq!(h, hash_bytes(&data));
        assert_eq!(n, data.len() as u64);
        assert_eq!(hex128(1).len(), 32);
    }
}
