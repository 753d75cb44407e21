//! Tests of the newline-delimited framing in `acp::codec`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use acp::codec::{DEFAULT_MAX_MESSAGE_SIZE, Frame, LineReader, LineWriter};
use proptest::prelude::*;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

/// An owned copy of a [`Frame`], so results can be collected.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Msg(Vec<u8>),
    TooLong(usize),
}

fn msg(bytes: &[u8]) -> Out {
    Out::Msg(bytes.to_vec())
}

/// A reader that hands out its data in chunks of the given sizes (cycling
/// through them), to simulate arbitrary splits between reads.
struct ChunkedReader {
    data: Vec<u8>,
    pos: usize,
    chunks: Vec<usize>,
    next_chunk: usize,
}

impl ChunkedReader {
    fn new(data: &[u8], chunks: &[usize]) -> Self {
        assert!(chunks.iter().all(|&c| c > 0));
        Self {
            data: data.to_vec(),
            pos: 0,
            chunks: chunks.to_vec(),
            next_chunk: 0,
        }
    }

    fn one_byte_at_a_time(data: &[u8]) -> Self {
        Self::new(data, &[1])
    }
}

impl AsyncRead for ChunkedReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let chunk = self.chunks[self.next_chunk % self.chunks.len()];
        self.next_chunk += 1;
        let n = chunk.min(buf.remaining()).min(self.data.len() - self.pos);
        buf.put_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

async fn collect<R: AsyncRead + Unpin>(mut reader: LineReader<R>) -> Vec<Out> {
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().await.expect("read failed") {
        out.push(match frame {
            Frame::Message(bytes) => Out::Msg(bytes.to_vec()),
            Frame::TooLong { size, .. } => Out::TooLong(size),
        });
    }
    // End of input stays end of input.
    assert!(reader.next_frame().await.expect("read failed").is_none());
    out
}

async fn frames(data: &[u8], max: usize) -> Vec<Out> {
    collect(LineReader::new(data, max)).await
}

/// The framing rules written as plainly as possible, over the whole input.
fn model(data: &[u8], max: usize) -> Vec<Out> {
    let mut out = Vec::new();
    for raw in data.split(|&b| b == b'\n') {
        if raw.len() > max {
            out.push(Out::TooLong(raw.len()));
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(msg(line));
        }
    }
    out
}

#[tokio::test]
async fn splits_lines_on_newline() {
    let data = b"{\"a\":1}\n{\"b\":2}\n";
    assert_eq!(
        frames(data, 100).await,
        vec![msg(b"{\"a\":1}"), msg(b"{\"b\":2}")]
    );
}

#[tokio::test]
async fn one_byte_reads_give_the_same_frames() {
    let data = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \t\n{\"b\":\"\xE2\x80\xA8\"}\nlast";
    let whole = frames(data, 100).await;
    let bytewise = collect(LineReader::new(
        ChunkedReader::one_byte_at_a_time(data),
        100,
    ))
    .await;
    assert_eq!(whole, bytewise);
    assert_eq!(whole, model(data, 100));
    assert_eq!(whole.len(), 3);
}

#[tokio::test]
async fn strips_crlf() {
    assert_eq!(
        frames(b"{}\r\n[1]\r\n", 100).await,
        vec![msg(b"{}"), msg(b"[1]")]
    );
}

#[tokio::test]
async fn strips_only_one_carriage_return() {
    assert_eq!(frames(b"{}\r\r\n", 100).await, vec![msg(b"{}\r")]);
}

#[tokio::test]
async fn lone_carriage_return_is_not_a_separator() {
    assert_eq!(
        frames(b"{\"a\":\r1}\n", 100).await,
        vec![msg(b"{\"a\":\r1}")]
    );
}

#[tokio::test]
async fn strips_byte_order_mark() {
    let data = b"\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n";
    assert_eq!(
        frames(data, 100).await,
        vec![msg(b"{\"a\":1}"), msg(b"{\"b\":2}")]
    );
}

#[tokio::test]
async fn byte_order_mark_alone_is_a_blank_line() {
    assert_eq!(frames(b"\xEF\xBB\xBF\n{}\n", 100).await, vec![msg(b"{}")]);
}

#[tokio::test]
async fn skips_blank_and_whitespace_lines() {
    let data = b"\n\n   \n\t\r\n\r\n{}\n \x0c \n";
    assert_eq!(frames(data, 100).await, vec![msg(b"{}")]);
}

#[tokio::test]
async fn empty_input_gives_no_frames() {
    assert_eq!(frames(b"", 100).await, vec![]);
    assert_eq!(frames(b"\n\n  ", 100).await, vec![]);
}

#[tokio::test]
async fn line_separator_inside_a_string_is_content() {
    let line = "{\"text\":\"a\u{2028}b\u{2029}c\"}";
    let data = format!("{line}\n{{}}\n");
    assert_eq!(
        frames(data.as_bytes(), 100).await,
        vec![msg(line.as_bytes()), msg(b"{}")]
    );
}

#[tokio::test]
async fn over_long_line_is_reported_and_skipped() {
    let long = vec![b'x'; 1000];
    let mut data = long.clone();
    data.extend_from_slice(b"\n{\"ok\":true}\n");
    assert_eq!(
        frames(&data, 100).await,
        vec![Out::TooLong(1000), msg(b"{\"ok\":true}")]
    );
}

#[tokio::test]
async fn line_at_the_limit_is_accepted() {
    let line = vec![b'x'; 100];
    let mut data = line.clone();
    data.push(b'\n');
    data.extend_from_slice(&[b'y'; 101]);
    data.push(b'\n');
    assert_eq!(
        frames(&data, 100).await,
        vec![msg(&line), Out::TooLong(101)]
    );
}

#[tokio::test]
async fn over_long_line_spanning_many_reads_reports_exact_size() {
    // The line is far larger than the read buffer and arrives in odd chunks.
    let mut data = b"{\"first\":1}\n".to_vec();
    data.extend(std::iter::repeat_n(b'z', 300_001));
    data.extend_from_slice(b"\r\n{\"after\":2}\n");
    let reader = LineReader::with_buffer_size(ChunkedReader::new(&data, &[7, 4096, 1]), 1000, 64);
    assert_eq!(
        collect(reader).await,
        vec![
            msg(b"{\"first\":1}"),
            Out::TooLong(300_002),
            msg(b"{\"after\":2}")
        ]
    );
}

#[tokio::test]
async fn over_long_last_line_without_newline() {
    let mut data = b"{}\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 5000));
    assert_eq!(
        frames(&data, 1000).await,
        vec![msg(b"{}"), Out::TooLong(5000)]
    );
}

#[tokio::test]
async fn final_line_without_newline_is_returned() {
    assert_eq!(
        frames(b"{\"a\":1}\n{\"b\":2}", 100).await,
        vec![msg(b"{\"a\":1}"), msg(b"{\"b\":2}")]
    );
    assert_eq!(frames(b"{}\r", 100).await, vec![msg(b"{}")]);
}

#[tokio::test]
async fn garbage_then_valid_lines() {
    let data = b"\x00\xff\xfe not json at all\x01\n{\"id\":1}\n\xc3(\n{\"id\":2}\n";
    assert_eq!(
        frames(data, 100).await,
        vec![
            msg(b"\x00\xff\xfe not json at all\x01"),
            msg(b"{\"id\":1}"),
            msg(b"\xc3("),
            msg(b"{\"id\":2}"),
        ]
    );
}

#[tokio::test]
async fn ten_mebibyte_line_with_default_limit() {
    let mut big = b"{\"data\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'a', 10 * 1024 * 1024));
    big.extend_from_slice(b"\"}");
    let mut data = big.clone();
    data.extend_from_slice(b"\n{\"small\":1}\n");
    data.extend_from_slice(&big);
    data.push(b'\n');
    let reader = LineReader::new(
        ChunkedReader::new(&data, &[1 << 20, 12_345]),
        DEFAULT_MAX_MESSAGE_SIZE,
    );
    let out = collect(reader).await;
    assert_eq!(out.len(), 3);
    assert!(out[0] == Out::Msg(big.clone()), "first big line differs");
    assert_eq!(out[1], msg(b"{\"small\":1}"));
    assert!(out[2] == Out::Msg(big), "second big line differs");
}

#[tokio::test]
async fn reads_continue_after_a_cancelled_call() {
    let (mut tx, rx) = tokio::io::duplex(1024);
    let mut reader = LineReader::new(rx, 100);
    tx.write_all(b"{\"half").await.expect("write");
    let pending = tokio::time::timeout(Duration::from_millis(20), reader.next_frame()).await;
    assert!(pending.is_err(), "no complete line yet");
    tx.write_all(b"\":1}\n").await.expect("write");
    drop(tx);
    assert_eq!(collect(reader).await, vec![msg(b"{\"half\":1}")]);
}

#[tokio::test]
async fn writer_output_is_exact() {
    let mut out = Vec::new();
    let mut writer = LineWriter::new(&mut out);
    writer.write_line(b"{\"a\":1}").await.expect("write");
    writer.write_line(b"").await.expect("write");
    writer
        .write_line(b"{\"b\":\"\xE2\x80\xA8\"}")
        .await
        .expect("write");
    writer.flush().await.expect("flush");
    assert_eq!(out, b"{\"a\":1}\n\n{\"b\":\"\xE2\x80\xA8\"}\n");
}

#[tokio::test]
async fn writer_handles_large_lines_in_order() {
    let big = vec![b'b'; 200_000];
    let medium = vec![b'm'; 40_000];
    let mut out = Vec::new();
    let mut writer = LineWriter::new(&mut out);
    writer.write_line(b"small").await.expect("write");
    writer.write_line(&big).await.expect("write");
    writer.write_line(&medium).await.expect("write");
    writer.write_line(&medium).await.expect("write");
    writer.write_line(b"tail").await.expect("write");
    writer.flush().await.expect("flush");
    let mut expected = b"small\n".to_vec();
    for line in [&big[..], &medium, &medium, b"tail"] {
        expected.extend_from_slice(line);
        expected.push(b'\n');
    }
    assert!(out == expected, "writer output differs");
}

#[tokio::test]
async fn writer_buffers_until_flush() {
    let (tx, mut rx) = tokio::io::duplex(1024);
    let mut writer = LineWriter::new(tx);
    writer.write_line(b"{}").await.expect("write");
    let mut reader = LineReader::new(&mut rx, 100);
    let early = tokio::time::timeout(Duration::from_millis(20), reader.next_frame()).await;
    assert!(early.is_err(), "nothing is written before flush");
    writer.flush().await.expect("flush");
    let frame = reader.next_frame().await.expect("read");
    assert_eq!(frame, Some(Frame::Message(b"{}")));
}

#[tokio::test]
async fn writer_rejects_embedded_newline() {
    let mut out = Vec::new();
    let mut writer = LineWriter::new(&mut out);
    let err = writer.write_line(b"{}\n{}").await.expect_err("must fail");
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    writer.flush().await.expect("flush");
    assert!(out.is_empty());
}

#[tokio::test]
async fn writer_output_reads_back() {
    let lines: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("{{\"id\":{i},\"pad\":\"{}\"}}", "p".repeat(i % 97)).into_bytes())
        .collect();
    let mut out = Vec::new();
    let mut writer = LineWriter::new(&mut out);
    for line in &lines {
        writer.write_line(line).await.expect("write");
    }
    writer.flush().await.expect("flush");
    let expected: Vec<Out> = lines.iter().map(|l| msg(l)).collect();
    assert_eq!(frames(&out, 1000).await, expected);
}

fn run<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(future)
}

/// Pieces that exercise every rule: separators, CR, BOM, whitespace,
/// multi-byte characters and long runs.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\xEF\xBB\xBF".to_vec()),
        1 => Just(b" ".to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just("\u{2028}".as_bytes().to_vec()),
        2 => Just(b"{\"k\":1}".to_vec()),
        2 => proptest::collection::vec(any::<u8>(), 0..8),
        1 => (1usize..200).prop_map(|n| vec![b'x'; n]),
    ]
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(piece(), 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_chunking_gives_the_model_frames(
        data in input(),
        chunks in proptest::collection::vec(1usize..50, 1..8),
        max in 0usize..120,
        buffer in 1usize..80,
    ) {
        let expected = model(&data, max);
        let small_buffer = run(collect(LineReader::with_buffer_size(
            ChunkedReader::new(&data, &chunks), max, buffer,
        )));
        prop_assert_eq!(&small_buffer, &expected);
        let default_buffer = run(collect(LineReader::new(ChunkedReader::new(&data, &chunks), max)));
        prop_assert_eq!(&default_buffer, &expected);
    }

    #[test]
    fn written_lines_read_back(
        lines in proptest::collection::vec(
            proptest::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..300),
            0..30,
        ),
        chunks in proptest::collection::vec(1usize..100, 1..5),
    ) {
        let mut out = Vec::new();
        run(async {
            let mut writer = LineWriter::new(&mut out);
            for line in &lines {
                writer.write_line(line).await.expect("write");
            }
            writer.flush().await.expect("flush");
        });
        let expected: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        prop_assert_eq!(&out, &expected);
        let read = run(collect(LineReader::new(ChunkedReader::new(&out, &chunks), 1000)));
        prop_assert_eq!(read, model(&out, 1000));
    }
}
