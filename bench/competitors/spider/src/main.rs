//! A minimal spider-rs crawler for the crawlflow bench: follow every link on the seed's host at
//! a fixed concurrency, robots.txt off, nothing stored. Prints one JSON line with its counts.
use std::process::ExitCode;
use std::time::Instant;

use spider::tokio::sync::broadcast::error::RecvError;
use spider::website::Website;

struct Args {
    url: String,
    concurrency: usize,
    max_pages: u32,
}

/// The flags every bench peer takes: `--url U --concurrency N --max-pages N`.
fn parse_args() -> Result<Args, String> {
    let mut args = Args { url: String::new(), concurrency: 32, max_pages: 0 };
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => args.url = value,
            "--concurrency" => args.concurrency = value.parse().map_err(|_| format!("--concurrency: not a number: {value}"))?,
            "--max-pages" => args.max_pages = value.parse().map_err(|_| format!("--max-pages: not a number: {value}"))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if args.url.is_empty() {
        return Err("--url is required".into());
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("spider: {message}");
            return ExitCode::from(2);
        }
    };
    let mut website = Website::new(&args.url);
    website
        .with_respect_robots_txt(false)
        .with_concurrency_limit(Some(args.concurrency))
        // 0 is spider's "no limit", as it is for the other peers' --max-pages.
        .with_limit(args.max_pages);

    // Pages are counted as spider hands them over; a counter that fell behind the channel is
    // told how many it missed, so those are still counted.
    let mut pages_rx = website.subscribe(1024);
    let counter = tokio::spawn(async move {
        let (mut pages, mut errors) = (0u64, 0u64);
        loop {
            match pages_rx.recv().await {
                Ok(page) if page.status_code.is_success() => pages += 1,
                Ok(_) => {
                    pages += 1;
                    errors += 1;
                }
                Err(RecvError::Lagged(missed)) => pages += missed,
                Err(RecvError::Closed) => return (pages, errors),
            }
        }
    });

    let started = Instant::now();
    website.crawl().await;
    website.unsubscribe();
    let (pages, errors) = counter.await.unwrap_or((0, 0));
    let summary = serde_json::json!({
        "tool": "spider",
        "pages": pages,
        "errors": errors,
        "seconds": started.elapsed().as_secs_f64(),
    });
    println!("{summary}");
    ExitCode::SUCCESS
}
