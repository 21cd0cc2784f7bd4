// Package robotstxt reads robots.txt files and decides URLs against them
// as RFC 9309 says. It is the engine of [github.com/polite-go/polite]'s
// transport, and serves on its own those who want its decisions without a
// transport: crawlers that schedule their own requests, site owners
// checking their file, tools filtering URLs. [Parse] reads a file;
// [File.Test] decides a URL for a User-Agent and names the rule that
// decided, as the example of Parse shows; [File.Group] binds a crawler's
// group once, and [Group.Decide] decides each path against it.
//
// # Reading
//
// [Parse] reads a file line by line. A line ends at CR, LF or CR LF; a '#'
// starts a comment; a UTF-8 byte order mark is dropped; field names are
// compared without regard to case; white space is spaces and tabs only, so
// a path that ends in another space character, such as U+00A0, keeps it
// (§2.2). One or more user-agent lines start a group, and its Allow,
// Disallow and Crawl-delay lines follow (§2.1). Only a rule, an Allow,
// Disallow or Content-Usage line (see Usage preferences), ends a group's
// user-agent lines: a blank line, a Crawl-delay, a Content-Signal, a
// Sitemap or an unknown line does not (§2.2.4), so in
//
//	User-agent: bingbot
//	Crawl-delay: 10
//
//	User-agent: *
//	Disallow: /private/
//
// the two user-agent lines start one group, and its Disallow binds bingbot.
// A Crawl-delay is in seconds, fractions allowed, and applies to every
// name of its group, as its rules do.
//
// A file is read with the tolerance of §2.3.1.5: every line that is
// understood is kept, and every other one is skipped without discarding
// the rest. [File.Skipped] lists the first 100 skipped lines with their
// numbers and why ("no colon", "rule outside any group", "not a path
// pattern", "bad Crawl-delay", "bad Content-Usage", "unknown field", ...), and
// [File.NumSkipped] counts them all. A file with no group, no sitemap and
// skipped lines, such as an HTML page served as robots.txt, allows
// everything. Parse reads the whole body; a crawler reads at most the
// first 500 KiB of a file and may ignore the rest (§2.5).
//
// # Which group binds
//
// A User-Agent header value chooses its group by its product token
// ([ProductToken]): the longest run of ASCII letters, '_' and '-' that
// begins it, whatever follows, lower-cased, as §2.2.1 defines a product
// token and Google's matcher reads one. "MyBot/1.0
// (+https://example.com/bot)" names "mybot", "Mozilla/5.0 (compatible;
// MyBot/1.0)" names "mozilla", and "MJ12bot/v1.4.8" names "mj".
//
// A user-agent line names its group's crawler the same way, by the product
// token of its value: "Foo Bar" and "Foo/1.0" name "foo",
// "Mediapartners-Google*" names "mediapartners-google", "bot\xff" names
// "bot", and "MJ12bot" names "mj", so the crawler MJ12bot still finds the
// group that names it. The value "*", alone or followed by white space,
// names the catch-all group (§2.2.1); "*BadBot*" names no crawler. A
// user-agent line that names none, such as `User-agent: "Vegi bot"` or an
// empty one, still starts or continues a group, which then binds no
// crawler; [File.Skipped] lists it.
//
// The groups naming the product token, compared exactly, bind it and are
// combined; with none, the "*" groups bind; with no "*" group, no rule
// applies and everything is allowed (§2.2.1). A User-Agent with no product
// token is bound by the "*" groups. [File.Group] returns what binds; its
// Crawl-delay is the largest of its groups'.
//
// # Matching
//
// A URL is decided on the path and query a server receives, as
// [RequestPath] gives them (its escaped path and query, as
// [net/url.URL.RequestURI] gives them, for a URL without Opaque), with
// percent-encoding normalised on both sides: an escaped unreserved character is decoded ("%7E" is "~"),
// other escapes are compared with upper-case hex ("%2f" is "%2F", and
// still not "/"), and octets that may not stand bare in a URI, such as
// non-ASCII ones, are escaped (§2.2.2). Then, as §2.2.2 and §2.2.3 say:
//
//   - A pattern is matched from the first octet of the path, and case
//     matters.
//   - '*' matches any run of octets, the empty run too.
//   - '$' as the last octet of a pattern means the end of the path. A '$'
//     anywhere else is the literal character, as "%24" is. A '*' in the
//     URL is matched only by a rule that writes it "%2A".
//   - Of the rules that match, the one whose pattern has the most octets,
//     in normalised form, decides; of two equally long, an Allow wins, and
//     of two as long and of one kind, the first in the group. No match
//     allows.
//
// One reading of §2.2.2's table is not followed: reserved characters are
// compared as written, so "Disallow: /q?u=https://x" does not match the
// URL "/q?u=https%3A%2F%2Fx".
//
// [File.Test] decides a User-Agent and a URL: it binds the User-Agent's
// group and decides the URL's escaped path and query, whatever its scheme,
// host and port, which are the caller's to match to the file's origin.
// /robots.txt itself is always allowed (§2.2.2). [Group.Decide] decides a
// path against a group already bound, for a crawler's hot path.
//
// A group with rules decides every path of up to [MaxPathLength] octets,
// 32 KiB, in normal form, whatever its rules (Cost, below). It does not
// decide a longer path, nor any path against a group too large for the
// engine's bound, which [Group.Err] reports when the group is bound:
// Decide and Test return a [*DecideError], which matches [ErrPathTooLong]
// or [ErrTooComplex], and the caller's policy decides.
//
// # Usage preferences
//
// A group may also say how the content it lets a crawler fetch may be
// used, in two vocabularies that [Usage] holds as one:
//
//   - Content-Usage rules, of draft-ietf-aipref-attach-05 (Illyes and
//     Thomson, 19 August 2026), in the vocabulary of
//     draft-ietf-aipref-vocab-07 (Keller and Thomson, 19 August 2026):
//     "Content-Usage: /ai-ok/ train-ai=y", the path optional. They are
//     rules: a user-agent line after one starts a new group, as after an
//     Allow or Disallow.
//   - Content-Signal lines, of Cloudflare's Content Signals Policy (CC0,
//     September 2025): "Content-Signal: search=yes, ai-train=no". They
//     take a path as Content-Usage rules do; like a Crawl-delay, they do
//     not end a group's user-agent lines.
//
// A statement is an RFC 9651 Dictionary, which [ParseContentUsage] and
// [ParseContentSignal] read, and the same functions read the response
// fields of those names. The categories of use are [TrainAI] ("train-ai"
// in Content-Usage, "ai-train" in Content-Signal), [Search] ("search" in
// both) and [AIInput] ("ai-input", which the aipref vocabulary has no term
// for yet); any other label is kept as the category it names. y and yes
// are [Yes], n and no are [No], anything else or nothing is [Unknown].
// Statements combine as draft-ietf-aipref-vocab-07 §5.1 says: any No gives
// No; otherwise any Yes gives Yes; otherwise Unknown.
//
// [Group.Usage] answers a path: the Content-Usage rules that match it,
// matched as Allow and Disallow rules are, with the most octets decide,
// and rules as long combine whatever their order (a rule with no path
// matches every path, with none); the Content-Signal lines are chosen
// apart the same way; the two combine, so the more restrictive wins for
// each use. [File.Usage] answers a User-Agent and a URL, and gives no
// preference for a URL the group does not let it fetch
// (draft-ietf-aipref-attach-05 §3.1). A line outside any group, or whose
// statement does not parse, is among [File.Skipped]; one that does not
// parse still holds its path, stating nothing, as
// draft-ietf-aipref-vocab-07 §6.5.1 says of a statement that fails.
//
// The drafts are work in progress, and this package reads the versions
// named above. When a later version changes them, a release of this
// package follows it and says so in its change log. What may change: the
// labels of the categories (a label renamed is a category renamed, which
// a crawler's declared uses must follow; a term for ai-input would be
// read as AIInput), where a rule's path ends and whether it may be left
// out, how rules of one path combine, and how statements combine. Labels
// the reader does not know are kept, so a category that a later version
// adds is answered by its label before this package names it.
//
// # Cost
//
// No pattern becomes a regular expression. A group's first three
// decisions try each rule in turn, when that costs little, so that a file
// used for a few decisions is never compiled; then the group is compiled
// once, and the groups that give the same names with it. Its patterns are
// split at their '*'s; the literal pieces of its wildcard rules are found
// in one Aho–Corasick pass over the path (when a group has many, those
// of one and two octets by tables of their octets, and those of 3 to 12
// octets that begin with a pair of octets few others share by their
// pairs), which notes where each first ends and which of the path's 64 blocks each ends in; only
// the rules whose pieces occur are tried, each piece placed at its first
// occurrence after the one before. A decision takes no lock, and once its group is
// compiled allocates nothing when the path is in normal form. A [File]
// and its groups are safe for concurrent use by multiple goroutines.
//
// Time. No decision is cut short: every path of up to [MaxPathLength]
// octets is decided, whatever the rules. For a path of n octets, a
// decision costs a binary search of the group's heads; at most 2n steps of
// the automaton, a step for each place where a literal ends and for each
// literal that occurs, and for each octet a search of the pairs and a
// comparison of at most 8 literals of at most 12 octets, and at most one for each literal and block it ends
// in (64 a literal), to note where the literals end; then each wildcard
// rule that could decide is tried once, placing at most one piece a piece
// of the rule and an octet of the path, each in a few comparisons, by a
// lookup in a bitmap of where the piece ends or in a table of its next
// end, or by searching at most two blocks of max(64, n/64) octets. A
// literal of at most 64 octets is searched for until the searches have
// read about as many octets as the blocks it ends in hold, and those
// blocks are then read once for its every end, into the bitmap: at most 5n
// octets a literal; a longer one costs its octets and two blocks each time
// it is placed. So a decision's work grows as O(n·L + F·(1 + n/2048)) at
// worst for a group of L distinct literals whose patterns hold F octets,
// and a rule's as O(n + its octets). On the worst files found, 500 KiB of
// rules written against the engine (BenchmarkEngineWorst), a decision
// takes at most 0.75 ms of CPU for a path of 2 KiB, 3.2 ms for one of 16
// KiB and 6.0 ms for one of 32 KiB on the machine of BENCHMARKS.md
// (medians at load 1, which a busier machine moves by a third or more),
// and decisions on real files take under a microsecond; a decision takes
// no context. A group whose wildcard patterns hold more than 1.5 MiB, more
// than 500 KiB of file can, is beyond that bound: [Group.Err] says so when
// the group is bound, and it decides no path. Compiling a group, once,
// takes time in proportion to its rules: 45 to 54 ms of CPU, parsing
// included, for 500 KiB of wildcard rules.
//
// Memory. A file keeps at most 8 times its size and 4 KiB, parsed, with
// every group compiled and every name it gives bound: what it keeps is
// counted as it is parsed, bound and compiled, each object as Go's
// allocator takes it, against that bound. A
// compiled group keeps a kilobyte and more however few its rules, and a
// name bound a hundred bytes, so a group of at most 128 rules holding at
// most 16 KiB of patterns is compiled, and a name's binding kept, only
// while they fit within the bound; a larger group is always compiled, and
// when it takes the file past the bound the small groups' matchers are let
// go, the file's last groups' first. A small group without its matcher
// decides by trying each rule in turn: at most 0.43 ms of CPU for a path
// of 2 KiB, 3.4 ms for 16 KiB and 6.3 ms for 32 KiB on the worst rules it
// may have (BenchmarkEngineTried). A binding not kept is made again for
// each call that asks for it, and decides as a kept one does. No real file
// of the tests' corpus has a group or a binding left so; 64 KiB of groups
// of five short rules, each bound, keep 7.9 times their size, and 64 KiB
// of groups of the fewest octets 8.0. A typical file of 132 octets keeps
// 566 bytes; the files that the tests build to keep much (cost_test.go:
// 500 KiB of rules of each kind, of distinct pieces of 3, 4 and 8 octets,
// of non-ASCII pieces, of pieces that end with others, every piece of two
// octets, many groups of a rule or of a few, many names, each bound, and
// many groups of 129 rules of random pieces of 3 to 5 octets, each bound
// and compiled, whose short literals a group finds by their first two
// octets) keep at most 8 times their size, and real files of 4 KiB or
// more at most 7.8 times. [File.Cost] bounds that heap in every case, and
// is known when the file is parsed: from 1 to 47 times the size
// of a file, by the rules it holds, and at most 6.6 times what a real
// file keeps. A cache of files can count each by it.
package robotstxt
