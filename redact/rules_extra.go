package redact

// This file holds what is ours, not gitleaks': two rules its default set
// lacks, and the allowlists added to gitleaks rules that were noisy on
// agent trajectories (bench/redact measures both).

// placeholderValues are values that only stand for a secret: shell and
// template variables, <angle> placeholders, masks, well-known dummies.
const placeholderValues = `(?i)^(?:\$\{?[\w.]+\}?|\$\([^)]*\)|<[^>]*>|\{\{[^}]*\}\}|%[\w]+%|\*+|x+|\.+|-+|` +
	`changeme|change_me|changeit|pass(?:word)?|passwd|secret|token|redacted|none|null|nil|true|false|` +
	`example|dummy|test|your[\w-]*|my[\w-]*|placeholder|\[redacted[^\]]*\])$`

// extraRules are our rules, for secrets the issue names that gitleaks'
// default set has no rule for.
var extraRules = []ruleSpec{
	{
		// scheme://user:password@host — database URLs, git remotes with a
		// token, proxies. The password is the secret.
		ID:       "url-password",
		Generic:  true,
		Regex:    `(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'"\x60<>]{1,128}:([^\s@/'"\x60<>]{3,256})@[a-z0-9_-][\w.-]*`,
		Keywords: []string{"://"},
		Allow:    []allowSpec{{Regexes: []string{placeholderValues}}},
	},
	{
		// NAME=value where NAME is an upper-case (environment) variable
		// named like a secret: env dumps, .env files, `export X=…`. The
		// value is the secret; gitleaks' generic rule needs ten characters
		// and high entropy, so it misses short passwords.
		ID:      "secret-assignment",
		Generic: true,
		Regex: `\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|_PASS|_PWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*` +
			`=['"]?([^\s'"\x60;&|]{4,256})`,
		Keywords: []string{"password", "passwd", "_pass", "_pwd", "secret", "token", "api_key", "apikey", "access_key", "private_key", "credential"},
		Allow:    []allowSpec{{Regexes: []string{placeholderValues, `^\$`, `^\[REDACTED:`}}},
	},
}

// tunings are allowlists added to gitleaks rules, by rule id.
var tunings = map[string][]allowSpec{}

// tuned returns s with our allowlists for it appended.
func tuned(s ruleSpec) ruleSpec {
	if extra := tunings[s.ID]; len(extra) > 0 {
		s.Allow = append(append([]allowSpec(nil), s.Allow...), extra...)
	}
	return s
}
