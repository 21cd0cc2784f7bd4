import crawlercommons.sitemaps.*;
import crawlercommons.sitemaps.extension.*;
import crawlercommons.filters.basic.BasicURLNormalizer;
import java.net.*;
import java.nio.file.*;
import java.time.format.DateTimeFormatter;

// Record reads one sitemap with crawler-commons' SiteMapParser and prints
// what it yields: args are file, url, content type ("-" to detect), and
// options: strict=false partial strictNamespace allowDTD normalize links.
public class Record {
    public static void main(String[] a) throws Exception {
        byte[] content = Files.readAllBytes(Paths.get(a[0]));
        URL url = new URI(a[1]).toURL();
        boolean strict = true, partial = false;
        for (int i = 3; i < a.length; i++) {
            if (a[i].equals("lenient")) strict = false;
            if (a[i].equals("partial")) partial = true;
        }
        SiteMapParser p = new SiteMapParser(strict, partial);
        for (int i = 3; i < a.length; i++) {
            if (a[i].equals("strictNamespace")) p.setStrictNamespace(true);
            if (a[i].equals("allowDTD")) p.setAllowDocTypeDefinitions(true);
            if (a[i].equals("normalize")) p.setURLFilter(new BasicURLNormalizer());
            if (a[i].equals("links")) p.enableExtension(Extension.LINKS);
        }
        AbstractSiteMap sm;
        try {
            sm = a[2].equals("-") ? p.parseSiteMap(content, url) : p.parseSiteMap(a[2], content, url);
        } catch (Exception e) {
            System.out.println("error\t" + e.getClass().getSimpleName());
            return;
        }
        System.out.println("type\t" + sm.getType());
        if (sm.isIndex()) {
            for (AbstractSiteMap s : ((SiteMapIndex) sm).getSitemaps()) {
                System.out.println("sitemap\t" + s.getUrl() + "\t" + date(s.getLastModified()));
            }
            return;
        }
        for (SiteMapURL u : ((SiteMap) sm).getSiteMapUrls()) {
            StringBuilder links = new StringBuilder();
            ExtensionMetadata[] md = u.getAttributesForExtension(Extension.LINKS);
            if (md != null) {
                for (ExtensionMetadata m : md) {
                    LinkAttributes l = (LinkAttributes) m;
                    links.append("\t").append(l.getParams().get("hreflang")).append("=").append(l.getHref());
                }
            }
            System.out.println("url\t" + u.getUrl() + "\t" + date(u.getLastModified()) + "\t" + (u.isValid() ? "valid" : "invalid") + links);
        }
    }

    static String date(java.util.Date d) {
        return d == null ? "" : DateTimeFormatter.ISO_INSTANT.format(d.toInstant());
    }
}
