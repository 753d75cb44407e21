//! Token usage and cost as acp shows them, every text of it written here
//! once: the number of tokens for people, the usage the agent reports
//! (`usage_update`) in the live area and after a turn, and a turn's token
//! counts (its prompt result).

use acp::schema::*;

/// `12.3k`, `200k`, `950`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// Usage for the status line: `1.2k/200k tokens · $0.05`.
pub fn live_usage(usage: &UsageUpdate) -> String {
    let mut text = format!("{}/{} tokens", tokens(usage.used), tokens(usage.size));
    if let Some(cost) = &usage.cost {
        if cost.currency == "USD" {
            text.push_str(&format!(" · ${:.2}", cost.amount));
        } else {
            text.push_str(&format!(" · {:.2} {}", cost.amount, cost.currency));
        }
    }
    text
}

/// Usage for the status line after a turn:
/// `context 1234/200000 tokens (0%), cost 0.05 USD`.
pub fn context_usage(usage: &UsageUpdate) -> String {
    let mut text = format!("context {}/{} tokens", usage.used, usage.size);
    if let Some(percent) = (usage.used * 100).checked_div(usage.size) {
        text.push_str(&format!(" ({percent}%)"));
    }
    if let Some(cost) = &usage.cost {
        text.push_str(&format!(", cost {:.2} {}", cost.amount, cost.currency));
    }
    text
}

/// A prompt result's token usage for the status line:
/// `tokens 1.2k in, 300 out (12 thought, 1k cached)`.
pub fn turn_usage(usage: &Usage) -> String {
    let mut text = format!(
        "tokens {} in, {} out",
        tokens(usage.input_tokens),
        tokens(usage.output_tokens)
    );
    let mut more = Vec::new();
    if let Some(n) = usage.thought_tokens {
        more.push(format!("{} thought", tokens(n)));
    }
    if let Some(n) = usage.cached_read_tokens {
        more.push(format!("{} cached", tokens(n)));
    }
    if let Some(n) = usage.cached_write_tokens {
        more.push(format!("{} written to cache", tokens(n)));
    }
    if !more.is_empty() {
        text.push_str(&format!(" ({})", more.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_for_the_status_line() {
        assert_eq!(
            turn_usage(&Usage::new(150, 120, 30)),
            "tokens 120 in, 30 out"
        );
        let u = Usage::new(2300, 2000, 300)
            .thought_tokens(12u64)
            .cached_read_tokens(1500u64);
        assert_eq!(
            turn_usage(&u),
            "tokens 2.0k in, 300 out (12 thought, 1.5k cached)"
        );
    }
}
