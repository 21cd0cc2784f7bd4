package audit

import "testing"

func TestNameAgent(t *testing.T) {
	named := map[string]bool{"googlebot": true, "gptbot": true, "yandex": true, "googlebot-image": true, "mozilla-ish": true}
	tests := []struct {
		ua   string
		name string
		kind agentKind
	}{
		// A word that a group names.
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot", agentNamed},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot", agentNamed},
		{"Googlebot-Image/1.0", "googlebot-image", agentNamed},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)", "gptbot", agentNamed},
		{"GPTBOT", "gptbot", agentNamed},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "yandex", agentNamed}, // the word of its address
		{"Mozilla-ish/1.0", "mozilla-ish", agentNamed},
		{"Mozilla/5.0 (compatible; Googlebotx/1.0)", "googlebotx", agentCrawler}, // a word, not a part of one
		// Its own product token.
		{"curl/8.5.0", "curl", agentCrawler},
		{"python-requests/2.31.0", "python-requests", agentCrawler},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit", agentCrawler},
		// The product after "compatible;".
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot", agentCrawler},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "semrushbot", agentCrawler},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; https://zhanzhang.toutiao.com/)", "bytespider", agentCrawler},
		{"Mozilla/5.0 (compatible; Barkrowler/0.9; +https://babbar.tech/crawler)", "barkrowler", agentCrawler},
		// ... whatever follows it.
		{"Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)", "httrack", agentCrawler},
		{"Mozilla/4.5 (compatible; HTTrack/3.0x; Windows 98)", "httrack", agentCrawler},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "yahoo", agentCrawler},
		{"Mozilla/5.0 (compatible; Ask Jeeves/Teoma; +http://about.ask.com/en/docs/about/webmasters.shtml)", "ask", agentCrawler},
		{"Mozilla/5.0 (compatible; Seekport Crawler; http://seekport.com/)", "seekport", agentCrawler},
		{"Mozilla/5.0 (compatible;Dataprovider.com)", "dataprovider", agentCrawler},
		// A platform after "compatible;" is no crawler's name.
		{"Mozilla/5.0 (compatible; Linux x86_64; Mail.RU_Bot/2.0; +http://go.mail.ru/help/robots)", "ru_bot", agentCrawler},
		{"Mozilla/5.0 (compatible; Windows NT 6.1; Catchpoint)", browsersName, agentBrowser},
		// A crawler's word.
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "applebot", agentCrawler},
		{"Mozilla/5.0 (+http://example.com/) SomeSpider", "somespider", agentCrawler},
		{"Mozilla/5.0 (+http://example.com/about-the-crawler.html)", "about-the-crawler", agentCrawler},
		// Browsers, and none.
		{"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0", browsersName, agentBrowser},
		{"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)", browsersName, agentBrowser},
		{"Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.2; Trident/6.0)", browsersName, agentBrowser},
		{"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 8.50", browsersName, agentBrowser},
		{"Mozilla/5.0 (compatible; Konqueror/4.5; Linux) KHTML/4.5.4 (like Gecko)", browsersName, agentBrowser},
		{"Mozilla/5.0 (compatible; U; ABrowse 0.6; Syllable) AppleWebKit/420+ (KHTML, like Gecko)", browsersName, agentBrowser},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", browsersName, agentBrowser},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70", browsersName, agentBrowser},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", browsersName, agentBrowser},
		{"Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko", browsersName, agentBrowser},
		{"Mozilla/5.0 (compatible;", browsersName, agentBrowser},
		{"Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.16", browsersName, agentBrowser},
		{"", noAgentName, agentNone},
		{" - ", noAgentName, agentNone},
		{"(unknown)", browsersName, agentBrowser},
	}
	for _, tt := range tests {
		name, kind := nameAgent([]byte(tt.ua), named)
		if name != tt.name || kind != tt.kind {
			t.Errorf("nameAgent(%q) = %q, %d; want %q, %d", tt.ua, name, kind, tt.name, tt.kind)
		}
	}

	// A group that names a word of the User-Agent names the crawler first.
	slurp := map[string]bool{"slurp": true}
	if name, kind := nameAgent([]byte("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)"), slurp); name != "slurp" || kind != agentNamed {
		t.Errorf("nameAgent(Yahoo! Slurp), a group for slurp = %q, %d; want slurp, %d", name, kind, agentNamed)
	}
}
