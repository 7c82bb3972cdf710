//! Reads of files that someone else may have written: regular files only,
//! and a size cap that applies while reading, so `/dev/zero`, a FIFO or a
//! symlink to `/dev/stdin` costs an error, never memory or a hang.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Reads at most `cap` bytes of the regular file at `path`; a longer file,
/// or anything that is not a regular file (after following symlinks), is
/// an `InvalidData` error naming the reason.
pub fn read(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the {cap}-byte limit"),
        ));
    }
    Ok(bytes)
}

/// Opens `path` for reading if it is a regular file (after following
/// symlinks); anything else is an `InvalidData` error, without blocking.
pub fn open_regular(path: &Path) -> io::Result<File> {
    // Checked before opening: opening a FIFO for reading blocks until a
    // writer appears.
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    // And again on the open file, in case the path changed in between.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// [`read`], as UTF-8 text.
pub fn read_to_string(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read(path, cap)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not valid UTF-8"))
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "not a regular file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_while_reading_and_refuses_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read(&p, 5).unwrap(), b"12345");
        assert!(read(&p, 4).unwrap_err().to_string().contains("limit"));
        #[cfg(unix)]
        {
            let dev_zero = Path::new("/dev/zero");
            assert!(read(dev_zero, 1 << 20)
                .unwrap_err()
                .to_string()
                .contains("not a regular file"));
            let link = dir.path().join("stdin");
            std::os::unix::fs::symlink("/dev/stdin", &link).unwrap();
            assert!(read(&link, 10).is_err());
        }
    }
}
