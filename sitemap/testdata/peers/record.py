#!/usr/bin/env python3
"""Records the peers' answers to their own sitemap test cases.

Each case's input is transcribed from the peer's test (or is the peer's test
resource, copied beside this script); its answer is what the peer's code
gives when run on it, which the peer's test asserts. Run from this directory:

  CC=/path/to/crawler-commons-classes SCRAPY=/path/to/scrapy python3 record.py

CC holds crawler-commons' classes (src/main/java compiled) and Record.class
(Record.java here); SCRAPY is a checkout of scrapy, whose
scrapy/utils/sitemap.py is run with lxml. It writes crawler-commons.json and
scrapy.json.
"""
import datetime, gzip, importlib.util, io, json, os, subprocess, sys, types

CC, SCRAPY = os.environ["CC"], os.environ["SCRAPY"]
CC_COMMIT, SCRAPY_COMMIT = "8e14e27", "11079cb"

def xml_sitemap(prefix=""):
    # SiteMapParserTest.getXMLSitemapAsBytes and SITEMAP_URLS.
    urls = [("http://www.example.com/", "2005-01-01", "monthly", "0.8"),
            ("http://www.example.com/catalog?desc=vacation_hawaii&amp;item=12", None, "weekly", None),
            ("http://www.example.com/catalog?desc=vacation_new_zealand&amp;item=73", "2004-12-23", "weekly", None),
            ("http://www.example.com/catalog?desc=vacation_newfoundland&amp;item=74", "2004-12-23T18:00:15&#43;00:00", None, "0.3"),
            ("http://www.example.com/catalog?desc=vacation_usa&amp;item=83", "2004-11-23", None, None)]
    s = prefix + '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    for loc, lastmod, freq, prio in urls:
        s += " <url>\n  <loc>" + loc + "</loc>\n"
        if lastmod: s += "  <lastmod>" + lastmod + "</lastmod>\n"
        if freq: s += "  <changefreq>" + freq + "</changefreq>\n"
        if prio: s += "  <priority>" + prio + "</priority>\n"
        s += " </url>\n"
    return s + "</urlset>"

XXE = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE urlset [\n  <!ENTITY test SYSTEM "file:///nonexistent/do-not-visit.txt">\n]>\n'
       '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n  <url>\n    <loc>http://www.example.com/visit-here</loc>\n'
       '    <lastmod>2019-06-19</lastmod>\n   </url>\n  <url>\n    <loc>&test;</loc>\n    <lastmod>2019-06-19</lastmod>\n  </url>\n</urlset>')
TXT = "http://www.example.com/catalog?item=1\nhttp://www.example.com/catalog?item=11"
RSS10 = ('<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"  xmlns="http://purl.org/rss/1.0/">'
         '<channel rdf:about="http://www.xml.com/xml/news.rss"><title>XML.com</title><link>http://www.example.com/pub</link>'
         '<description>example.com</description><image rdf:resource="http://www.example.com/universal/images/xml_tiny.gif" />'
         '<items><rdf:Seq><rdf:li resource="http://www.example.com/pub/2000/08/09/xslt/xslt.html" />'
         '<rdf:li resource="http://www.example.com/pub/2000/08/09/rdfdb/index.html" /></rdf:Seq></items></channel>'
         '<image rdf:about="http://www.example.com/universal/images/xml_tiny.gif"><title>XML.com</title><link>http://www.xml.com</link>'
         '<url>http://www.example.com/universal/images/xml_tiny.gif</url></image>'
         '<item rdf:about="http://www.example.com/pub/2000/08/09/xslt/xslt.html"><title>Processing Inclusions with XSLT</title>'
         '<link>http://www.example.com/pub/2000/08/09/xslt/xslt.html</link>'
         '<description>Processing document inclusions with general XML tools can be problematic. This article proposes a way of preserving inclusion'
         'information through SAX-based processing. </description> </item> </rdf:RDF>')
LENIENT = ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>'
           '<loc>http://www.example.com/</loc></url></urlset>')
filtered = xml_sitemap().replace("<loc>http://www.example.com/</loc>", "<loc>www.example.com/</loc>", 1).replace(
    "item=12</loc>", "item=12#anchor</loc>", 1)

# (test, line, url, content type or "-", options, body or file)
CC_CASES = [
    ("testSitemapIndex", 60, "http://www.example.com/sitemapindex.xml", "text/xml", [],
     '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n <sitemap>\n'
     '  <loc>http://www.example.com/sitemap1.xml.gz</loc>\n  <lastmod><![CDATA[2004-10-01T18:23:17+00:00]]></lastmod>\n </sitemap>\n'
     '<sitemap>\n  <loc>http://www.example.com/sitemap2.xml.gz</loc>\n  <lastmod>2005-01-01</lastmod>\n </sitemap>\n'
     '<sitemap>\n  <loc>http://www.example.com/dynsitemap?date=now&amp;all=true</loc>\n  <lastmod>2004-10-01T18:23:17&#43;00:00</lastmod>\n </sitemap>\n'
     '<sitemap>\n  <loc>http://www.example.com/dynsitemap<![CDATA[?date=lastyear&all=false]]></loc>\n </sitemap>\n</sitemapindex>'),
    ("testSitemapXXE", 119, "http://www.example.com/sitemap.xxe.xml", "text/xml", [], XXE),
    ("testSitemapXXEWithDocTypeAllowed", 149, "http://www.example.com/sitemap.xxe.xml", "text/xml", ["allowDTD"], XXE),
    ("testSitemapXIncludeDisabled", 187, "http://www.example.com/sitemap.xinclude.xml", "text/xml", [],
     '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
     '        xmlns:xi="http://www.w3.org/2001/XInclude">  <url>\n    <loc>http://www.example.com/visit-here</loc>\n'
     '    <lastmod>2019-06-19</lastmod>\n   </url>\n  <url>\n    <loc><xi:include href="file:///nonexistent/do-not-visit.txt" parse="text"/></loc>\n'
     '    <lastmod>2019-06-19</lastmod>\n  </url>\n</urlset>'),
    ("testSitemapWithNamespace", 224, "http://www.example.com/sitemap.ns.xml", "-", ["strictNamespace"], "file:sitemap.ns.xml"),
    ("testSitemapWithWrongNamespace", 241, "http://www.example.com/sitemap.badns.xml", "-", ["strictNamespace"], "file:sitemap.badns.xml"),
    ("testSitemapWithWrongNamespace", 258, "http://www.example.com/sitemap.badns.xml", "-", [], "file:sitemap.badns.xml"),
    ("testSitemapTXT", 268, "http://www.example.com/sitemap.txt", "text/plain", [], TXT),
    ("testSitemapTXTWithXMLExt", 285, "http://www.example.com/sitemap.xml", "text/plain", [], TXT),
    ("testSitemapTXTWithWrongMimeType", 301, "http://www.example.com/sitemap.xml", "application/bogus", [], TXT),
    ("testSitemapTXTfilterUrls", 317, "http://www.example.com/sitemap.txt", "text/plain", ["normalize"],
     "www.example.com/catalog?item=1\nhttp://www.example.com/catalog?item=11#anchor"),
    ("testSitemapXML", 338, "http://www.example.com/sitemap.xml", "text/xml", [], xml_sitemap()),
    ("testSitemapXMLleadingWhiteSpace", 359, "http://www.example.com/sitemap.xml", "text/xml", [], xml_sitemap("\ufeff\n \t\r\n")),
] + [("testSitemapXMLMediaTypes", 374, "http://www.example.com/sitemap.nonXmlExt", ct, [], xml_sitemap())
     for ct in ["text/xml", "application/x-xml", "application/xml", "application/atom+xml", "application/rss+xml"]] + [
    ("testSitemapXMLfilterUrls", 394, "http://www.example.com/sitemap.xml", "text/xml", ["normalize"], filtered),
    ("testSitemapParserBrokenXml", 428, "http://www.example.com/sitemapindex.xml", "text/xml", [],
     '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
     '<url><!-- This file is not a valid XML file --></url><url><loc> http://cs.harding.edu/fmccown/sitemaps/something.html</loc>'
     '</url><!-- missing opening url tag --></url></urlset>'),
    ("testMissingLocSitemapIndexFile", 445, "http://www.example.com/sitemap.index.xml", "-", [], "file:sitemap.index.xml"),
    ("testUnclosedSitemapIndexFile", 465, "http://www.example.com/sitemapindex.xml", "-", [],
     '<?xml version="1.0" encoding="UTF-8"?><sitemapindex> <sitemap>  <loc>https://www.example.org/sitemap1.xml</loc>'
     '  <loc>https://www.example.org/sitemap2.xml</loc> </sitemap></sitemapindex>'),
    ("testUnclosedSitemapIndexFile", 489, "http://www.example.com/sitemapindex.xml", "-", [],
     '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex>\n <sitemap>\n  <loc>https://www.example.org/sitemap1.xml</loc>\n'
     '  <lastmod>2004-10-01T18:23:17+00:00</lastmod>\n  <loc>https://www.example.org/sitemap2.xml</loc>\n'
     '  <loc>https://www.example.org/sitemap3.xml</loc>\n  <lastmod>2005-11-02T19:24:18+00:00</lastmod>\n </sitemap>\n</sitemapindex>'),
    ("testStripUnicodeWhiteSpace", 512, "https://www.example.com/sitemapindex.xml", "-", [],
     '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex>\n <sitemap>\n  <loc>\n   <![CDATA[ https://www.example.com/sitemap1.xml ]]>\n'
     '  </loc>\n </sitemap>\n <sitemap>\n  <loc>\n   <![CDATA[\u00a0https://www.example.com/sitemap2.xml ]]> \u2000\n  </loc>\n'
     ' </sitemap>\n</sitemapindex>'),
    ("testSitemapGZ", 540, "http://www.example.com/sitemap.xml.gz", "application/gzip", [], "file:xmlSitemap.gz"),
    ("testSitemapTextGZ", 554, "http://www.example.com/sitemap.txt.gz", "application/gzip", [], "file:sitemap.txt.gz"),
] + [("testSitemapGZMediaTypes", 568, "http://www.example.com/sitemap", ct, [], "file:xmlSitemap.gz")
     for ct in ["application/gzip", "application/x-gzip", "application/x-gunzip", "application/gzipped", "application/gzip-compressed", "gzip/document"]] + [
    ("testSitemapWithInvalidContent", 584, "http://www.example.com/sitemap", "application/octet-stream", [], "this is a bogus sitemap"),
    ("testLenientParser", 596, "http://www.example.com/subsection/sitemap.xml", "text/xml", [], LENIENT),
    ("testLenientParser", 612, "http://www.example.com/subsection/sitemap.xml", "text/xml", ["lenient"], LENIENT),
    ("testAtomFormat", 624, "http://example.org/atom.xml", "-", [], "file:atom.xml"),
    ("testRSSFormat", 641, "https://www.example.com/index.php?feed/rss", "-", [], "file:feed.rss"),
    ("testRSS10SyndicationFormat", 673, "http://www.example.com/sitemapindex.xml", "text/xml", [], RSS10),
    ("testRSS10SyndicationFormat", 705, "http://www.example.com/sitemapindex.xml", "-", [], RSS10),
    ("testRSSPubDate", 714, "http://www.example.com/rss.xml", "text/xml", [], "file:xmlRss_pubDate.xml"),
    ("testPartialSitemapsAllowed", 750, "http://www.example.com/subsection/sitemap.xml", "text/xml", ["lenient", "partial"],
     '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://www.example.com/</lo'),
    ("testUrlLocUrl", 792, "http://www.example.com/subsection/sitemap.xml", "text/xml", ["lenient"],
     '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc><url>'
     '<![CDATA[http://jobs.optistaffing.com/EXPERIENCED-DISPATCHER-NEEDED-NOW----Jobs-in-Vancouver-WA/2333221]]></url></loc>'
     '<lastmod>2015-04-28</lastmod><changefreq>daily</changefreq></url></urlset>'),
    ("testPartialSitemapIndicesAllowed", 818, "http://www.example.com/subsection/sitemap.xml", "text/xml", ["lenient", "partial"],
     '<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
     '<sitemap><loc>http://www.example.com/sitemap1.xml.gz</loc><las'),
    ("SiteMapParserExtensionTest.testXHTMLLinksSitemap", 200, "http://www.example.com/sitemap-links.xml", "-", ["links"], "file:sitemap-links.xml"),
]
CC_TYPES = {"XML": "urlset", "INDEX": "sitemapindex", "RSS": "rss", "ATOM": "atom", "TEXT": "text"}

def cc_cases():
    out = []
    for n, (test, line, url, ctype, opts, body) in enumerate(CC_CASES, 1):
        c = {"id": "crawler-commons/%03d" % n, "test": ("" if "." in test else "SiteMapParserTest.") + test + ":%d" % line,
             "url": url, "content_type": ctype, "peer_options": opts, "lenient": "lenient" in opts}
        if body.startswith("file:"):
            c["file"] = "crawler-commons/" + body[5:]
            path = c["file"]
        else:
            c["body"] = body
            path = "/tmp/cc-case"
            open(path, "w", encoding="utf-8").write(body)
        res = subprocess.run(["java", "-cp", CC + ":/usr/share/java/commons-io.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar",
                              "Record", path, url, ctype] + opts, capture_output=True, text=True, check=True).stdout.splitlines()
        want = {"error": False, "entries": []}
        for l in res:
            f = l.split("\t")
            if f[0] == "error":
                want["error"] = True
            elif f[0] == "type":
                want["format"] = CC_TYPES[f[1]]
            else:
                e = {"url": f[1]}
                if f[2]: e["lastmod"] = f[2]
                if f[0] == "sitemap": e["sitemap"] = True
                if len(f) > 4: e["alternates"] = f[4:]
                want["entries"].append(e)
        c["want"] = want
        out.append(c)
    # testFileLocationValidation:772 asks SiteMapParser.urlIsValid of four URLs.
    for n, (base, u, ok) in enumerate([
            ("http://example.com/catalog/sitemap.xml", "http://example.com/catalog/show?item=233&user=3453", True),
            ("http://example.com/catalog/sitemap.xml", "http://example.com/image/show?item=233&user=3453", False),
            ("http://example.com/catalog/sitemap.xml", "https://example.com/catalog/page1.php", False),
            ("https://example.com/index.php?route=path/sitemap", "https://example.com/catalog/page1.php", True)], len(out) + 1):
        out.append({"id": "crawler-commons/%03d" % n, "test": "SiteMapParserTest.testFileLocationValidation:772", "kind": "scope",
                    "url": base, "want": {"entries": [{"url": u}] if ok else []}, "scope_url": u})
    # AbstractSiteMapTest.testDateParsing:41 and testRssDateNormalyzing:113.
    for n, (s, instant, test) in enumerate([
            ("blah", "", "testDateParsing:43"), ("2014", "2014-01-01T00:00:00Z", "testDateParsing:53"),
            ("2014-06", "2014-06-01T00:00:00Z", "testDateParsing:54"), ("2014-06-03", "2014-06-03T00:00:00Z", "testDateParsing:55"),
            ("2014-06-03T10:30+00:00", "2014-06-03T10:30:00Z", "testDateParsing:62"),
            ("2014-06-03T10:30:45+00:00", "2014-06-03T10:30:45Z", "testDateParsing:65"),
            ("2014-06-03T10:30:45-05:00", "2014-06-03T15:30:45Z", "testDateParsing:68"),
            ("2014-06-03T10:30:45.82+00:00", "2014-06-03T10:30:45.820Z", "testDateParsing:74"),
            ("1997-07-16T19:20+01:00", "1997-07-16T18:20:00Z", "testDateParsing:89"),
            ("1997-07-16T19:20:30.45+01:00", "1997-07-16T18:20:30.450Z", "testDateParsing:95"),
            ("incorrect", "", "testRssDateNormalyzing:115"),
            ("Thu, 05 Jan 2017 12:34:50 GMT", "2017-01-05T12:34:50Z", "testRssDateNormalyzing:117"),
            ("Thu, 05 Jan 2017 13:34:51 +0100", "2017-01-05T12:34:51Z", "testRssDateNormalyzing:118"),
            ("05 Jan 2017 11:34:52 -0100", "2017-01-05T12:34:52Z", "testRssDateNormalyzing:119"),
            ("05 Jan 17 12:34:53 GMT", "2017-01-05T12:34:53Z", "testRssDateNormalyzing:120"),
            ("Thu, 05 Jan 17 12:34:54 GMT", "2017-01-05T12:34:54Z", "testRssDateNormalyzing:121")], len(out) + 1):
        out.append({"id": "crawler-commons/%03d" % n, "test": "AbstractSiteMapTest." + test, "kind": "date",
                    "date": s, "want": {"lastmod": instant}})
    return out

# Scrapy: (test, line, kind, url, body or file, since, answer from the spider's test where the
# utility's is not the whole answer)
SITEMAP_084 = ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">\n<url>\n'
               '<loc>http://www.example.com/</loc>\n<lastmod>2009-08-16</lastmod>\n<changefreq>daily</changefreq>\n<priority>1</priority>\n'
               '</url>\n<url>\n<loc>http://www.example.com/Special-Offers.html</loc>\n<lastmod>2009-08-16</lastmod>\n'
               '<changefreq>weekly</changefreq>\n<priority>0.8</priority>\n</url>\n</urlset>')
STRIP = ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">\n<url>\n'
         '<loc> http://www.example.com/</loc>\n<lastmod>2009-08-16</lastmod>\n<changefreq>daily</changefreq>\n<priority>1</priority>\n'
         '</url>\n<url>\n<loc> http://www.example.com/2</loc>\n<lastmod />\n</url>\n</urlset>\n')
ROBOTS = (b"User-agent: *\nDisallow: /aff/\nDisallow: /wl/\n\n# Search and shopping refining\nDisallow: /s*/*facet\nDisallow: /s*/*tags\n\n"
          b"# Sitemap files\nSitemap: http://example.com/sitemap.xml\nSitemap: http://example.com/sitemap-product-index.xml\n"
          b"Sitemap: HTTP://example.com/sitemap-uppercase.xml\nSitemap: /sitemap-relative-url.xml\n\n# Forums\nDisallow: /forum/search/\n"
          b"Disallow: /forum/active/\n")
ALTERNATE = ('<?xml version="1.0" encoding="UTF-8"?>\n    <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
             '        xmlns:xhtml="http://www.w3.org/1999/xhtml">\n        <url>\n            <loc>http://www.example.com/english/</loc>\n'
             '            <xhtml:link rel="alternate" hreflang="de"\n                href="http://www.example.com/deutsch/"/>\n'
             '            <xhtml:link rel="alternate" hreflang="de-ch"\n                href="http://www.example.com/schweiz-deutsch/"/>\n'
             '            <xhtml:link rel="alternate" hreflang="it"\n                href="http://www.example.com/italiano/"/>\n'
             '            <xhtml:link rel="alternate" hreflang="it"/><!-- wrong tag without href -->\n        </url>\n    </urlset>')
FILTER = ('<?xml version="1.0" encoding="UTF-8"?>\n    <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
          '        xmlns:xhtml="http://www.w3.org/1999/xhtml">\n        <url>\n            <loc>http://www.example.com/english/</loc>\n'
          '            <lastmod>2010-01-01</lastmod>\n        </url>\n        <url>\n            <loc>http://www.example.com/portuguese/</loc>\n'
          '            <lastmod>2005-01-01</lastmod>\n        </url>\n    </urlset>')
INDEX_FILTER = ('<?xml version="1.0" encoding="UTF-8"?>\n    <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                '        <sitemap>\n            <loc>http://www.example.com/sitemap1.xml</loc>\n            <lastmod>2004-01-01T20:00:00+00:00</lastmod>\n'
                '        </sitemap>\n        <sitemap>\n            <loc>http://www.example.com/sitemap2.xml</loc>\n            <lastmod>2005-01-01</lastmod>\n'
                '        </sitemap>\n    </sitemapindex>')
SCRAPY_CASES = [
    ("test_utils_sitemap.py::test_sitemap", 9, "read", "http://www.example.com/sitemap.xml", SITEMAP_084, "", None),
    ("test_utils_sitemap.py::test_sitemap_index", 59, "read", "http://www.example.com/sitemap.xml",
     '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<sitemap>\n'
     '  <loc>http://www.example.com/sitemap1.xml.gz</loc>\n  <lastmod>2004-10-01T18:23:17+00:00</lastmod>\n</sitemap>\n<sitemap>\n'
     '  <loc>http://www.example.com/sitemap2.xml.gz</loc>\n  <lastmod>2005-01-01</lastmod>\n</sitemap>\n</sitemapindex>', "", None),
    ("test_utils_sitemap.py::test_sitemap_strip", 86, "read", "http://www.example.com/sitemap.xml", STRIP, "", None),
    ("test_utils_sitemap.py::test_sitemap_wrong_ns", 116, "read", "http://www.example.com/sitemap.xml",
     STRIP.replace("<url>", '<url xmlns="">'), "", None),
    ("test_utils_sitemap.py::test_sitemap_wrong_ns2", 146, "read", "http://www.example.com/sitemap.xml",
     STRIP.replace('<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">', "<urlset>").replace("<url>", '<url xmlns="">'), "", None),
    ("test_utils_sitemap.py::test_sitemap_blanklines", 227, "read", "http://www.example.com/sitemap.xml",
     '\n<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n\n'
     '<!-- cache: cached = yes name = sitemap_jspCache key = sitemap -->\n<sitemap>\n<loc>http://www.example.com/sitemap1.xml</loc>\n'
     '<lastmod>2013-07-15</lastmod>\n</sitemap>\n\n<sitemap>\n<loc>http://www.example.com/sitemap2.xml</loc>\n<lastmod>2013-07-15</lastmod>\n'
     '</sitemap>\n\n<sitemap>\n<loc>http://www.example.com/sitemap3.xml</loc>\n<lastmod>2013-07-15</lastmod>\n</sitemap>\n\n'
     '<!-- end cache -->\n</sitemapindex>\n', "", None),
    ("test_utils_sitemap.py::test_comment", 261, "read", "http://www.example.com/sitemap.xml",
     '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
     '    xmlns:xhtml="http://www.w3.org/1999/xhtml">\n    <url>\n        <loc>http://www.example.com/</loc>\n'
     '        <!-- this is a comment on which the parser might raise an exception if implemented incorrectly -->\n    </url>\n</urlset>', "", None),
    ("test_utils_sitemap.py::test_alternate", 275, "read", "http://www.example.com/sitemap.xml",
     ALTERNATE.replace('hreflang="it"\n                href="http://www.example.com/italiano/"', 'hreflang="en"\n                href="http://www.example.com/english/"')
              .replace('hreflang="it"/>', 'hreflang="en"/>').replace("\n    <urlset", "\n<urlset").replace("    </urlset>", "</urlset>"), "", None),
    ("test_utils_sitemap.py::test_xml_entity_expansion", 304, "read", "http://127.0.0.1:8000/sitemap.xml",
     '<?xml version="1.0" encoding="utf-8"?>\n      <!DOCTYPE foo [\n      <!ELEMENT foo ANY >\n      <!ENTITY xxe SYSTEM "file:///etc/passwd" >\n'
     '      ]>\n      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n        <url>\n          <loc>http://127.0.0.1:8000/&xxe;</loc>\n'
     '        </url>\n      </urlset>\n    ', "", None),
    ("test_utils_sitemap.py::test_sitemap_non_string_tag", 321, "read", "http://www.example.com/sitemap.xml", "<url>&k;", "", None),
    ("test_spider_sitemap.py::test_alternate_url_locs", 123, "read", "http://www.example.com/sitemap.xml", ALTERNATE, "", None),
    ("test_spider_sitemap.py::test_sitemap_filter", 149, "read", "http://www.example.com/sitemap.xml", FILTER, "", None),
    ("test_spider_sitemap.py::test_sitemap_filter", 149, "read", "http://www.example.com/sitemap.xml", FILTER, "2009-01-01T00:00:00Z",
     ["http://www.example.com/english/"]),
    ("test_spider_sitemap.py::test_sitemapindex_filter", 213, "read", "http://www.example.com/sitemap.xml", INDEX_FILTER, "", None),
    ("test_spider_sitemap.py::test_sitemapindex_filter", 213, "read", "http://www.example.com/sitemap.xml", INDEX_FILTER, "2005-01-01T00:00:00Z",
     ["http://www.example.com/sitemap2.xml"]),
    ("test_spider_sitemap.py::test_sitemap_empty_loc", 279, "read", "http://www.example.com/sitemap.xml",
     '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
     '<url><loc></loc></url><url><loc>http://www.example.com/text</loc></url></urlset>', "", None),
    ("test_spider_sitemap.py::test_parse_sitemap_empty_body", 298, "read", "http://www.example.com/sitemap.xml", "", "", []),
    ("test_spider_sitemap.py::test_parse_sitemap_not_sitemap", 317, "read", "http://www.example.com/random.xml",
     '<?xml version="1.0" encoding="UTF-8"?>\n    <some attr="string">\n        <tag><tag3>sometext</tag3></tag>\n'
     '        <tag2><tag4>sometext2</tag4></tag2>\n    </some>', "", []),
    ("test_spider_sitemap.py::test_compression_bomb_setting", 362, "read", "https://example.com", "file:bomb-gzip.bin", "", []),
]

def load_scrapy():
    exc = types.ModuleType("scrapy.exceptions")
    exc.ScrapyDeprecationWarning = DeprecationWarning
    sys.modules["scrapy"] = types.ModuleType("scrapy")
    sys.modules["scrapy.exceptions"] = exc
    spec = importlib.util.spec_from_file_location("sitemap", os.path.join(SCRAPY, "scrapy/utils/sitemap.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

def instant(s):
    # Scrapy yields <lastmod> as written; recorded as the instant it names.
    try:
        d = datetime.datetime.fromisoformat(s)
    except ValueError:
        return ""
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return d.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

def scrapy_cases():
    m = load_scrapy()
    out = []
    for n, (test, line, kind, url, body, since, spider) in enumerate(SCRAPY_CASES, 1):
        c = {"id": "scrapy/%03d" % n, "test": test + ":%d" % line, "url": url, "lenient": False}
        if body.startswith("file:"):
            c["file"] = "scrapy/" + body[5:]
            raw = open(c["file"], "rb").read()
        else:
            c["body"] = body
            raw = body.encode()
        if since:
            c["since"] = since
        if "bomb" in body:
            c["max_bytes"] = 10_000_000  # the test's DOWNLOAD_MAXSIZE
        want = {"error": False, "entries": []}
        if spider is not None:
            want["entries"] = [{"url": u} for u in spider]
            want["from_spider"] = True
        else:
            s = m.Sitemap(raw)
            want["format"] = s.type
            for d in s:
                if not d["loc"]:
                    continue  # SitemapSpider's iterloc passes over an empty <loc>
                e = {"url": d["loc"]}
                if d.get("lastmod"):
                    e["lastmod"] = instant(d["lastmod"])
                if s.type == "sitemapindex":
                    e["sitemap"] = True
                if d.get("alternate"):
                    e["alternate_urls"] = d["alternate"]
                want["entries"].append(e)
            if s.type not in ("urlset", "sitemapindex"):
                want["entries"] = []  # SitemapSpider ignores any other type
        c["want"] = want
        out.append(c)
    robots = {"id": "scrapy/%03d" % (len(out) + 1), "test": "test_spider_sitemap.py::test_get_sitemap_urls_from_robotstxt:96",
              "kind": "robots", "url": "http://www.example.com/robots.txt", "body": ROBOTS.decode(),
              "want": {"entries": [{"url": u} for u in m.sitemap_urls_from_robots(ROBOTS, base_url="http://www.example.com/robots.txt")]}}
    bad = b"User-agent: *\nSitemap: http://example.com/\xff.xml\nSitemap: http://example.com/ok.xml\n"
    robots2 = {"id": "scrapy/%03d" % (len(out) + 2), "test": "test_spider_sitemap.py::test_get_sitemap_urls_from_robotstxt_skips_invalid_utf8_urls:112",
               "kind": "robots", "url": "http://www.example.com/robots.txt", "body_latin1": bad.decode("latin-1"),
               "want": {"entries": [{"url": u} for u in m.sitemap_urls_from_robots(bad, base_url="http://www.example.com/robots.txt")]}}
    return out + [robots, robots2]

def write(name, suite, source, cases):
    with open(name, "w") as f:
        json.dump({"suite": suite, "source": source, "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")

write("crawler-commons.json", "crawler-commons",
      "crawler-commons/crawler-commons %s src/test/java/crawlercommons/sitemaps/ (SiteMapParserTest, SiteMapParserExtensionTest, "
      "AbstractSiteMapTest) and src/test/resources/: each case's input, and the answer SiteMapParser gave when run on it (Apache-2.0)" % CC_COMMIT,
      cc_cases())
write("scrapy.json", "scrapy",
      "scrapy/scrapy %s tests/test_utils_sitemap.py and tests/test_spider_sitemap.py: each case's input, and the answer "
      "scrapy.utils.sitemap gave when run on it, or the spider's test asserts (BSD-3-Clause)" % SCRAPY_COMMIT,
      scrapy_cases())
