package redact

// This file holds what is ours, not gitleaks': two rules its default set
// lacks, and the allowlists added to gitleaks rules that were noisy on
// agent trajectories (bench/redact measures both).

// placeholderValues are values that only stand for a secret: shell and
// template variables, <angle> placeholders, masks, well-known dummies.
const placeholderValues = `(?i)^(?:\$\{?[\w.]+\}?|\$\([^)]*\)|<[^>]*>|\{\{[^}]*\}\}|%[\w]+%|\*+|x+|\.+|-+|` +
	`changeme|change_me|changeit|pass(?:word)?|passwd|secret|token|redacted|none|null|nil|true|false|` +
	`example|dummy|test|your[\w-]*|my[_-]?(?:pass\w*|secret\w*|token\w*|key\w*|pw)|placeholder|\[redacted[^\]]*\])$`

// extraRules are our rules, for secrets the issue names that gitleaks'
// default set has no rule for.
var extraRules = []ruleSpec{
	{
		// scheme://user:password@host — database URLs, git remotes with a
		// token, proxies. The password is the secret.
		ID:       "url-password",
		Generic:  true,
		Regex:    `(?i)://[^\s:/@'"\x60<>]{1,128}:([^\s@/'"\x60<>]{3,256})@[a-z0-9_-][\w.-]*`,
		Keywords: []string{"://"},
		Pre:      userInfo,
		Allow:    []allowSpec{{Regexes: []string{placeholderValues}}},
	},
	{
		// NAME=value where NAME is an upper-case (environment) variable
		// named like a secret: env dumps, .env files, `export X=…`. The
		// value is the secret; gitleaks' generic rule needs ten characters
		// and high entropy, so it misses short passwords.
		ID:      "secret-assignment",
		Generic: true,
		// The match starts at the secret-like word, not at the name's
		// start, so that it runs anchored at each keyword.
		Regex: `(?:PASSWORD|PASSWD|_PASS|_PWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*` +
			`=['"]?([^\s'"\x60;&|]{4,256})`,
		Keywords: []string{"password", "passwd", "_pass", "_pwd", "secret", "token", "api_key", "apikey", "access_key", "private_key", "credential"},
		Allow:    []allowSpec{{Regexes: []string{placeholderValues, `^\$`, `^\[REDACTED:`}}},
	},
}

// ourGlobal is an allowlist of ours applied to every rule, after
// gitleaks' global one: documentation placeholders seen in the real data
// (an .env template in a system prompt: "DISCORD_BOT_TOKEN=MTIz...",
// "TELEGRAM_BOT_TOKEN=123456:ABC-DEF...", "DISCORD_ALLOWED_USERS=
// 123456789012345678"): a value cut short with "..." or "…", or holding an
// ascending digit run.
var ourGlobal = allowSpec{Regexes: []string{`(?:\.\.\.|…)$`, `123456789|^0?123456\b`}}

// hashLike are hex digests (MD5, SHA-1 incl. git commit ids, SHA-256) and
// UUIDs: gitleaks' generic rule took "cache_key": "<sha256>" in the real
// data for a key.
const hashLike = `^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9A-F]{32}|[0-9A-F]{40}|[0-9A-F]{64}|` +
	`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`

// userInfo reports whether the URL whose "://" is at s[at:] has a
// user:password@ part: a ':' and then an '@' before the host part ends.
func userInfo(s string, at int) bool {
	colon := false
	for i := at + 3; i < len(s) && i < at+3+400; i++ {
		switch s[i] {
		case ':':
			colon = true
		case '@':
			return colon
		case '/', ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
			return false
		}
	}
	return false
}

// within are literals one of which every match of a rule holds after its
// keyword (ruleSpec.Within), by rule id: gitleaks' curl rules run from
// "curl" over a window of about 2 KB with lazy .*? runs, which regexp
// searches with its NFA; the option they need (-H or --header, -u or
// --user) is rarely there in agent trajectories, where "curl" is.
var within = map[string][]string{
	"curl-auth-header": {"-H", "--header"},
	"curl-auth-user":   {"-u", "--user"},
}

// tunings are allowlists added to gitleaks rules, by rule id.
var tunings = map[string][]allowSpec{
	"generic-api-key": {{Regexes: []string{hashLike}}},
}

// locator replaces a rule's keywords with rarer ones its every match
// holds, and says where a match starts from one of them.
type locator struct {
	keywords []string
	locate   func(s string, at int) int
}

// locators, by rule id. gitleaks' JWT rule has the keyword "ey", which
// prose is full of ("they", "key"): its matches also hold ".ey" (the
// second segment's start) after a run of 17 or more letters and digits
// that starts with "ey" at a word boundary, which is found from there.
var locators = map[string]locator{
	"jwt": {keywords: []string{".ey"}, locate: jwtStart},
}

// jwtStart is where a JWT whose second segment starts at s[at:] (".ey")
// begins: the start of the run of letters and digits before at, when it
// starts with "ey" and is long enough; -1 otherwise.
func jwtStart(s string, at int) int {
	q := at
	for q > 0 && at-q < 1<<14 && isAlnum(s[q-1]) {
		q--
	}
	if at-q < 19 || s[q] != 'e' || s[q+1] != 'y' {
		return -1
	}
	return q
}

func isAlnum(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// tuned returns s with our allowlists for it appended and its locator.
func tuned(s ruleSpec) ruleSpec {
	if extra := tunings[s.ID]; len(extra) > 0 {
		s.Allow = append(append([]allowSpec(nil), s.Allow...), extra...)
	}
	s.Within = within[s.ID]
	if l, ok := locators[s.ID]; ok {
		s.Keywords, s.Locate = l.keywords, l.locate
	}
	return s
}
