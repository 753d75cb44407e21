//! Which model failures are worth another try, and how long to wait first.
//!
//! Transient: HTTP 408, 409, 425, 429 and every 5xx (529 is Anthropic's
//! "overloaded"), a connection that broke after it was made (reset, closed
//! early), an overloaded or internal error reported inside the stream, and a
//! malformed or cut-off stream. Permanent: every other HTTP status (401,
//! 403, 404, 400…), a server that cannot be reached at all (connection
//! refused, unknown host: a local server that is not running), a silent
//! server (the request timeout already waited long) and a provider that is
//! not configured.
//!
//! A transient failure is tried again after a wait: what the server asked
//! for in `retry-after-ms` or `retry-after` (seconds or an HTTP date), else
//! an exponential backoff (1 s, 2 s, 4 s…, at most 30 s) with ±20% jitter, at
//! most [`RetryPolicy::max_retries`] times. A server that asks to wait longer
//! than [`RetryPolicy::max_wait`] is not waited for: the failure is final.

use super::LlmError;
use std::time::{Duration, SystemTime};

/// How a failed model call goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Try again, after the wait the server asked for, if it did.
    Retry {
        /// The server's `retry-after`.
        after: Option<Duration>,
    },
    /// Give up: the failure will not go away by itself.
    Fail,
}

/// Whether `error` is worth another try.
pub fn verdict(error: &LlmError) -> Verdict {
    match error {
        LlmError::Http {
            status: 408 | 409 | 425 | 429 | 500..=599,
            retry_after,
            ..
        } => Verdict::Retry {
            after: *retry_after,
        },
        LlmError::Network(_) | LlmError::Malformed(_) => Verdict::Retry { after: None },
        LlmError::Stream { kind, message } => {
            let transient_kind = kind.as_deref().is_some_and(|k| {
                matches!(
                    k,
                    "overloaded_error"
                        | "api_error"
                        | "rate_limit_error"
                        | "server_error"
                        | "rate_limit_exceeded"
                )
            });
            if transient_kind || message.to_ascii_lowercase().contains("overloaded") {
                Verdict::Retry { after: None }
            } else {
                Verdict::Fail
            }
        }
        _ => Verdict::Fail,
    }
}

/// How often and how long to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Most retries of one model call (0: none).
    pub max_retries: u32,
    /// The first backoff.
    pub base: Duration,
    /// The longest backoff.
    pub cap: Duration,
    /// The longest wait a server may ask for; longer ones are not waited for.
    pub max_wait: Duration,
}

/// Why a transient failure is not tried again; its text ends the user's
/// error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GiveUp {
    /// The policy allows no retries.
    #[error("retries are off")]
    Off,
    /// Every allowed retry failed too.
    #[error("it failed again after {0} {word}", word = retries(*.0))]
    Exhausted(u32),
    /// The server asked for a longer wait than the policy allows.
    #[error(
        "the server asks to wait {} s before trying again, longer than {} s",
        asked.as_secs(),
        max.as_secs()
    )]
    WaitTooLong {
        /// The server's `retry-after`.
        asked: Duration,
        /// [`RetryPolicy::max_wait`].
        max: Duration,
    },
}

/// "retry" or "retries", for `n` of them.
fn retries(n: u32) -> &'static str {
    if n == 1 { "retry" } else { "retries" }
}

impl RetryPolicy {
    /// Up to `max_retries` retries, backing off from 1 s to 30 s, waiting at
    /// most 60 s when the server asks.
    pub fn new(max_retries: u32) -> Self {
        RetryPolicy {
            max_retries,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(30),
            max_wait: Duration::from_secs(60),
        }
    }

    /// The wait before retry number `retry` (from 1), given the server's
    /// `retry-after`; `Err` says why there is no retry.
    pub fn delay(&self, retry: u32, after: Option<Duration>) -> Result<Duration, GiveUp> {
        if retry > self.max_retries {
            return Err(match self.max_retries {
                0 => GiveUp::Off,
                n => GiveUp::Exhausted(n),
            });
        }
        if let Some(after) = after {
            if after > self.max_wait {
                return Err(GiveUp::WaitTooLong {
                    asked: after,
                    max: self.max_wait,
                });
            }
            return Ok(after);
        }
        let exp = self
            .base
            .saturating_mul(1u32 << (retry - 1).min(16))
            .min(self.cap);
        Ok(jitter(exp))
    }
}

/// `d` moved by up to ±20%, from the clock's nanoseconds.
fn jitter(d: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|t| t.subsec_nanos())
        .unwrap_or(0);
    let factor = 0.8 + f64::from(nanos % 1000) / 1000.0 * 0.4;
    d.mul_f64(factor)
}

/// The wait a server asks for: `retry-after-ms` (milliseconds), else
/// `retry-after` as seconds or as an HTTP date (relative to `now`).
pub fn parse_retry_after(
    millis: Option<&str>,
    header: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = millis.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`), the form HTTP dates
/// are sent in.
fn parse_http_date(s: &str) -> Option<SystemTime> {
    let rest = s.split_once(", ").map_or(s, |(_, r)| r);
    let civil = jiff::fmt::strtime::parse("%d %b %Y %H:%M:%S GMT", rest)
        .ok()?
        .to_datetime()
        .ok()?;
    let at = jiff::tz::Offset::UTC.to_timestamp(civil).ok()?;
    let secs = u64::try_from(at.as_second()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> LlmError {
        LlmError::Http {
            status,
            message: "m".into(),
            retry_after: None,
        }
    }

    #[test]
    fn transient_and_permanent() {
        for s in [408, 429, 500, 502, 503, 504, 529] {
            assert_eq!(verdict(&http(s)), Verdict::Retry { after: None }, "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert_eq!(verdict(&http(s)), Verdict::Fail, "{s}");
        }
        assert_eq!(verdict(&LlmError::Connect("refused".into())), Verdict::Fail);
        assert_eq!(verdict(&LlmError::Timeout), Verdict::Fail);
        assert!(matches!(
            verdict(&LlmError::Network("reset".into())),
            Verdict::Retry { .. }
        ));
        assert!(matches!(
            verdict(&LlmError::Malformed("cut".into())),
            Verdict::Retry { .. }
        ));
        let overloaded = LlmError::Stream {
            kind: Some("overloaded_error".into()),
            message: "Overloaded".into(),
        };
        assert!(matches!(verdict(&overloaded), Verdict::Retry { .. }));
        let refusal = LlmError::Stream {
            kind: Some("invalid_request_error".into()),
            message: "prompt is too long".into(),
        };
        assert_eq!(verdict(&refusal), Verdict::Fail);
    }

    #[test]
    fn backoff_is_capped_and_retry_after_honoured() {
        let p = RetryPolicy::new(10);
        let near = |d: Duration, secs: f64| {
            let s = d.as_secs_f64();
            s >= secs * 0.8 - 1e-9 && s <= secs * 1.2 + 1e-9
        };
        assert!(near(p.delay(1, None).unwrap(), 1.0));
        assert!(near(p.delay(3, None).unwrap(), 4.0));
        assert!(near(p.delay(10, None).unwrap(), 30.0), "capped");
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7))).unwrap(),
            Duration::from_secs(7)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3600)))
                .unwrap_err()
                .to_string(),
            "the server asks to wait 3600 s before trying again, longer than 60 s"
        );
        assert_eq!(
            p.delay(11, None).unwrap_err().to_string(),
            "it failed again after 10 retries"
        );
        assert_eq!(
            RetryPolicy::new(1).delay(2, None).unwrap_err().to_string(),
            "it failed again after 1 retry"
        );
        assert_eq!(
            RetryPolicy::new(0).delay(1, None).unwrap_err().to_string(),
            "retries are off"
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(
            parse_retry_after(None, Some("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            parse_retry_after(Some("1500"), Some("9"), now),
            Some(Duration::from_millis(1500))
        );
        // 2015-10-21T07:28:00Z is 10 s after `now`.
        assert_eq!(
            parse_retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT"), now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_retry_after(None, Some("soon"), now), None);
        assert_eq!(parse_retry_after(None, Some("-1"), now), None);
        assert_eq!(parse_retry_after(None, None, now), None);
    }
}
