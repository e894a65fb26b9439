//! Images for the model: passed through when small enough, otherwise decoded,
//! downscaled with a Lanczos filter and re-encoded, all in Rust.

use std::io::Cursor;

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions, Resizer};
use image::{DynamicImage, ImageReader, Limits};

use crate::error::{Error, ErrorKind, Result};
use crate::sniff::ImageFormat;

/// Limits for images given to a model. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct ImageConfig {
    max_edge: u32,
    max_bytes: usize,
    max_pixels: u64,
}

impl Default for ImageConfig {
    fn default() -> ImageConfig {
        ImageConfig { max_edge: 2000, max_bytes: 3_932_160, max_pixels: 50_000_000 }
    }
}

impl ImageConfig {
    /// The longest edge in pixels. By default, this is 2000.
    pub fn max_edge(&mut self, px: u32) -> &mut Self {
        self.max_edge = px.max(16);
        self
    }

    /// The most pixels an image may have to be decoded at all: a small file can declare
    /// a huge canvas, and decoding costs up to four bytes a pixel. By default, this is
    /// 50 million (a 48-megapixel photo fits).
    pub fn max_pixels(&mut self, pixels: u64) -> &mut Self {
        self.max_pixels = pixels.max(1);
        self
    }

    /// The most encoded bytes. By default, this is 3.75 MiB.
    pub fn max_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_bytes = bytes.max(1024);
        self
    }
}

/// An image ready for a model.
#[derive(Clone, Debug)]
pub struct ShapedImage {
    /// The encoded bytes.
    pub bytes: Vec<u8>,
    /// Their MIME type.
    pub mime: &'static str,
    /// Width as sent.
    pub width: u32,
    /// Height as sent.
    pub height: u32,
    /// Width of the original.
    pub original_width: u32,
    /// Height of the original.
    pub original_height: u32,
    /// Whether the image was downscaled or re-encoded.
    pub resized: bool,
}

/// Shapes an encoded image to fit `config`: the original bytes when they already fit,
/// else a downscaled re-encoding (PNG for images with alpha, JPEG otherwise).
pub fn shape_image(bytes: Vec<u8>, format: ImageFormat, config: &ImageConfig) -> Result<ShapedImage> {
    let (w, h) = dimensions(&bytes)?;
    if w.max(h) <= config.max_edge && bytes.len() <= config.max_bytes {
        return Ok(ShapedImage {
            bytes,
            mime: format.mime(),
            width: w,
            height: h,
            original_width: w,
            original_height: h,
            resized: false,
        });
    }
    if w as u64 * h as u64 > config.max_pixels {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("image is {w}×{h} pixels, over the limit of {} pixels", crate::page::group(config.max_pixels)),
        ));
    }
    let img = decode(&bytes, config.max_pixels)?;
    drop(bytes);
    // Keep 8-bit grey and colour as they are; only wider formats are converted.
    let img = match img {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_) => img,
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.into_rgba8()),
        other => DynamicImage::ImageRgb8(other.into_rgb8()),
    };
    let mut edge = config.max_edge.min(w.max(h));
    let mut quality = 85u8;
    loop {
        let (nw, nh) = fit(w, h, edge);
        let small = resize(&img, nw, nh)?;
        let (out, mime) = encode(&small, quality)?;
        if out.len() <= config.max_bytes || edge <= 64 {
            if out.len() > config.max_bytes {
                return Err(Error::new(ErrorKind::Image, "image cannot be reduced under the byte limit"));
            }
            return Ok(ShapedImage {
                bytes: out,
                mime,
                width: nw,
                height: nh,
                original_width: w,
                original_height: h,
                resized: true,
            });
        }
        if mime == "image/jpeg" && quality > 60 {
            quality -= 15;
        } else {
            edge = edge * 3 / 4;
        }
    }
}

fn reader(bytes: &[u8], max_pixels: u64) -> Result<ImageReader<Cursor<&[u8]>>> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::new(ErrorKind::Image, format!("cannot read image: {e}")))?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(max_pixels.saturating_mul(4).saturating_add(64 << 20));
    reader.limits(limits);
    Ok(reader)
}

fn dimensions(bytes: &[u8]) -> Result<(u32, u32)> {
    reader(bytes, u64::MAX / 8)?
        .into_dimensions()
        .map_err(|e| Error::new(ErrorKind::Image, format!("cannot read image header: {e}")))
}

fn decode(bytes: &[u8], max_pixels: u64) -> Result<DynamicImage> {
    reader(bytes, max_pixels)?.decode().map_err(|e| Error::new(ErrorKind::Image, format!("cannot decode image: {e}")))
}

fn fit(w: u32, h: u32, edge: u32) -> (u32, u32) {
    if w >= h {
        (edge, ((h as u64 * edge as u64) / w as u64).max(1) as u32)
    } else {
        (((w as u64 * edge as u64) / h as u64).max(1) as u32, edge)
    }
}

fn resize(img: &DynamicImage, w: u32, h: u32) -> Result<DynamicImage> {
    if img.width() == w && img.height() == h {
        return Ok(img.clone());
    }
    let mut dst = DynamicImage::new(w, h, img.color());
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    Resizer::new()
        .resize(img, &mut dst, &options)
        .map_err(|e| Error::new(ErrorKind::Image, format!("cannot resize image: {e}")))?;
    Ok(dst)
}

fn encode(img: &DynamicImage, quality: u8) -> Result<(Vec<u8>, &'static str)> {
    let mut out = Vec::new();
    let (written, mime) = if img.color().has_alpha() {
        let encoder = image::codecs::png::PngEncoder::new(&mut out);
        (img.write_with_encoder(encoder), "image/png")
    } else {
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
        (img.write_with_encoder(encoder), "image/jpeg")
    };
    written.map_err(|e| Error::new(ErrorKind::Image, format!("cannot encode image: {e}")))?;
    Ok((out, mime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::ImageEncoder;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbaImage::from_fn(w, h, |x, y| image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255]));
        let mut out = Vec::new();
        image::codecs::png::PngEncoder::new(&mut out)
            .write_image(img.as_raw(), w, h, image::ExtendedColorType::Rgba8)
            .unwrap();
        out
    }

    #[test]
    fn small_image_passes_through() {
        let bytes = png(10, 20);
        let out = shape_image(bytes.clone(), ImageFormat::Png, &ImageConfig::default()).unwrap();
        assert!(!out.resized);
        assert_eq!(out.bytes, bytes);
        assert_eq!((out.width, out.height), (10, 20));
    }

    #[test]
    fn large_image_is_downscaled() {
        let out = shape_image(png(3000, 1500), ImageFormat::Png, &ImageConfig::default()).unwrap();
        assert!(out.resized);
        assert_eq!((out.width, out.height), (2000, 1000));
        assert_eq!((out.original_width, out.original_height), (3000, 1500));
        assert_eq!(dimensions(&out.bytes).unwrap(), (2000, 1000));
    }

    #[test]
    fn huge_canvas_refused_before_decoding() {
        let mut cfg = ImageConfig::default();
        cfg.max_pixels(1000);
        let err = shape_image(png(3000, 10), ImageFormat::Png, &cfg).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge);
    }

    #[test]
    fn grey_stays_grey() {
        let img = image::GrayImage::from_fn(3000, 10, |x, _| image::Luma([(x % 256) as u8]));
        let mut bytes = Vec::new();
        image::codecs::png::PngEncoder::new(&mut bytes)
            .write_image(img.as_raw(), 3000, 10, image::ExtendedColorType::L8)
            .unwrap();
        let out = shape_image(bytes, ImageFormat::Png, &ImageConfig::default()).unwrap();
        assert_eq!((out.width, out.mime), (2000, "image/jpeg"));
        let back = image::load_from_memory(&out.bytes).unwrap();
        assert_eq!(back.color(), image::ColorType::L8);
    }

    #[test]
    fn garbage_is_an_image_error() {
        let err = shape_image(b"\x89PNG\r\n\x1a\nnot really".to_vec(), ImageFormat::Png, &ImageConfig::default())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Image);
    }
}
