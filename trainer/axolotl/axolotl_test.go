package axolotl

import (
	"reflect"
	"testing"
)

// Messages maps roles through the dataset's roles (a role it does not
// name passes as it is), drops a first system message under
// drop_system_message, and decides per message whether it is trained:
// the training flag (Python truthiness), else the detail, else
// train_on_inputs or roles_to_train (whose names are mapped too).
func TestMessages(t *testing.T) {
	in := `[{"role":"system","content":"s"},{"role":"human","content":"a","train":0},{"role":"bot","content":"b"},{"role":"gpt","content":"c","train":null},{"role":"observation","content":"d","train":"yes"},{"role":"gpt","content":"e","detail":[{"begin_offset":0,"end_offset":0,"train":true}]}]`
	r := NewRules(map[string][]string{"user": {"human"}, "assistant": {"gpt", "bot"}}, []string{"gpt"}, false, "train", "detail", "turn", "turn", true)
	out, ms, err := r.Messages([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":"a","train":0},{"role":"assistant","content":"b"},{"role":"assistant","content":"c","train":null},{"role":"observation","content":"d","train":"yes"},{"role":"assistant","content":"e","detail":[{"begin_offset":0,"end_offset":0,"train":true}]}]`
	if string(out) != want {
		t.Errorf("messages:\n got %s\nwant %s", out, want)
	}
	wantMs := []Message{{Role: "user"}, {Role: "assistant", Train: true}, {Role: "assistant", Train: true}, {Role: "observation", Train: true},
		{Role: "assistant", Train: true, Detail: []Range{{0, 0, true}}}}
	if !reflect.DeepEqual(ms, wantMs) {
		t.Errorf("trained:\n got %+v\nwant %+v", ms, wantMs)
	}
	// The default mapping, and the messages returned as given when no
	// role changes.
	d := NewRules(nil, []string{"assistant"}, false, "", "", "turn", "turn", false)
	same := `[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`
	if out, ms, err := d.Messages([]byte(same)); err != nil || string(out) != same || ms[0].Train || !ms[1].Train {
		t.Errorf("default: %s %+v %v", out, ms, err)
	}
	if d.Legacy() || !NewRules(nil, nil, false, "", "", "", "", false).Legacy() {
		t.Error("legacy path")
	}
}

func TestTruthy(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "false": false, "null": false, "0": false, "0.0": false, "1": true, "-2": true,
		`""`: false, `"x"`: true, "[]": false, "[1]": true, "{}": false, "{ }": false, `{"a":1}`: true} {
		if got := truthy([]byte(v)); got != want {
			t.Errorf("truthy(%s) = %v", v, got)
		}
	}
}

// Every named template held parses as text (their renders are compared
// with jinja2 by trainview's TestTrainerViewsMatchJinja2).
func TestTemplates(t *testing.T) {
	names := Templates()
	if len(names) < 10 {
		t.Fatalf("templates %v", names)
	}
	for _, n := range names {
		if s, ok := Template(n); !ok || len(s) == 0 {
			t.Errorf("%s: empty", n)
		}
	}
	if _, ok := Template("nope"); ok {
		t.Error("unknown name found")
	}
}
