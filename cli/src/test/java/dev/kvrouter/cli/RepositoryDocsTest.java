package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The repository's docs stand alone: every relative link in every Markdown file resolves to a file
 * inside the repository, and the module graph docs/architecture.md draws is the one the poms declare.
 */
class RepositoryDocsTest {

    /** The repository root: the cli module's parent (surefire runs in the module's folder). */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    /** [text](target) — the target up to a space, a closing parenthesis or a fragment. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s#]*)(#[^)\\s]*)?\\)");
    /** A row of the module table: | `module` | `dep`, `dep` (test), … |. */
    private static final Pattern MODULE_ROW = Pattern.compile("^\\| `([a-z-]+)` \\| (.*) \\|$");
    private static final Pattern MODULE_DEP = Pattern.compile("`([a-z-]+)`( \\(test\\))?");

    @Test
    void everyRelativeLinkInEveryMarkdownFileResolvesInsideTheRepository() throws IOException {
        List<Path> docs = markdownFiles();
        assertThat(docs).as("README.md and docs/architecture.md among them")
                .contains(ROOT.resolve("README.md"), ROOT.resolve("docs/architecture.md"));
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path doc : docs) {
            Matcher m = LINK.matcher(Files.readString(doc));
            while (m.find()) {
                String target = m.group(1);
                if (target.isEmpty() || target.matches("^[a-z]+:.*")) {
                    continue; // a fragment in the same page, or http(s):, mailto:
                }
                links++;
                Path resolved = doc.getParent().resolve(target).normalize();
                if (!resolved.startsWith(ROOT) || !Files.exists(resolved)) {
                    broken.add(ROOT.relativize(doc) + " -> " + target);
                }
            }
        }
        assertThat(links).as("links checked").isGreaterThan(10);
        assertThat(broken).as("links that do not resolve inside the repository").isEmpty();
    }

    @Test
    void theModuleGraphInTheArchitectureDocIsTheOneThePomsDeclare() throws Exception {
        Set<String> fromPoms = new TreeSet<>();
        List<String> modules = children(pom(ROOT.resolve("pom.xml")), "modules", "module");
        assertThat(modules).contains("schemas", "flink-jobs", "redis-sink", "cli");
        for (String module : modules) {
            fromPoms.add(module + " ->");
            Element project = pom(ROOT.resolve(module).resolve("pom.xml"));
            for (Element dependency : elements(project, "dependencies", "dependency")) {
                String group = text(dependency, "groupId");
                String artifact = text(dependency, "artifactId");
                if (!"dev.kvrouter".equals(group) || !artifact.startsWith("kvr-")) {
                    continue;
                }
                String scope = text(dependency, "scope");
                fromPoms.add(module + " -> " + artifact.substring("kvr-".length()) + ("test".equals(scope) ? " (test)" : ""));
            }
        }
        Set<String> fromDoc = new TreeSet<>();
        String doc = Files.readString(ROOT.resolve("docs/architecture.md"));
        String table = doc.substring(doc.indexOf("## Modules"), doc.indexOf("### ", doc.indexOf("## Modules")));
        for (String line : table.split("\n")) {
            Matcher row = MODULE_ROW.matcher(line.strip());
            if (!row.matches()) {
                continue;
            }
            fromDoc.add(row.group(1) + " ->");
            Matcher dep = MODULE_DEP.matcher(row.group(2));
            while (dep.find()) {
                fromDoc.add(row.group(1) + " -> " + dep.group(1) + (dep.group(2) != null ? " (test)" : ""));
            }
        }
        assertThat(fromDoc).as("docs/architecture.md's module table against the poms' dev.kvrouter dependencies")
                .isEqualTo(fromPoms);
    }

    @Test
    void noHandWrittenSourceOpensAPackageThatAnAvroNamespaceOwns() throws Exception {
        Set<Path> namespaces = new TreeSet<>();
        Path avro = ROOT.resolve("schemas/src/main/avro");
        try (Stream<Path> schemas = Files.walk(avro)) {
            schemas.filter(p -> p.toString().endsWith(".avsc")).forEach(p -> namespaces.add(avro.relativize(p.getParent())));
        }
        assertThat(namespaces).as("the Avro namespaces, as paths").contains(Path.of("dev/kvrouter/events"), Path.of("dev/kvrouter/alerts"));
        List<String> shared = new ArrayList<>();
        for (String module : children(pom(ROOT.resolve("pom.xml")), "modules", "module")) {
            for (String sources : List.of("src/main/java", "src/test/java")) {
                for (Path namespace : namespaces) {
                    Path dir = ROOT.resolve(module).resolve(sources).resolve(namespace);
                    if (Files.isDirectory(dir)) {
                        shared.add(ROOT.relativize(dir).toString());
                    }
                }
            }
        }
        assertThat(shared).as("hand-written packages that are also Avro namespaces").isEmpty();
    }

    private static List<Path> markdownFiles() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> {
                        Path relative = ROOT.relativize(p);
                        for (Path part : relative) {
                            String name = part.toString();
                            if (name.equals("target") || name.equals("node_modules") || name.startsWith(".")) {
                                return false; // build output, downloads, run folders (.kvr) and git
                            }
                        }
                        return true;
                    })
                    .sorted().toList();
        }
    }

    private static Element pom(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile()).getDocumentElement();
    }

    /** The {@code child} elements of the project's direct {@code section} element (not dependencyManagement's). */
    private static List<Element> elements(Element project, String section, String child) {
        List<Element> out = new ArrayList<>();
        for (Element s : directChildren(project, section)) {
            out.addAll(directChildren(s, child));
        }
        return out;
    }

    private static List<String> children(Element project, String section, String child) {
        return elements(project, section, child).stream().map(e -> e.getTextContent().strip()).toList();
    }

    private static List<Element> directChildren(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    private static String text(Element parent, String name) {
        List<Element> found = directChildren(parent, name);
        return found.isEmpty() ? null : found.get(0).getTextContent().strip();
    }
}
