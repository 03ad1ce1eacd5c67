package metrics

import (
	"encoding/json"
	"math"
	"testing"
)

// Expected values were printed by CPython 3: json.dumps(round(x, d)) and
// json.dumps(x).
func TestRound(t *testing.T) {
	cases := []struct {
		name   string
		x      float64
		digits int
		want   string
	}{
		{"above_half_in_binary_rounds_up", 0.12345, 4, "0.1235"},
		{"exact_tie_to_even_down", 0.03125, 4, "0.0312"},
		{"exact_tie_to_even_up", 0.09375, 4, "0.0938"},
		{"below_half_in_binary_rounds_down", 2.675, 2, "2.67"},
		{"tie_0_125", 0.125, 2, "0.12"},
		{"tie_0_375", 0.375, 2, "0.38"},
		{"tie_2_5_to_0_digits", 2.5, 0, "2.0"},
		{"tie_3_5_to_0_digits", 3.5, 0, "4.0"},
		{"tie_0_25_to_1_digit", 0.25, 1, "0.2"},
		{"tie_0_75_to_1_digit", 0.75, 1, "0.8"},
		{"integral_mean_keeps_dot_zero", 10000, 1, "10000.0"},
		{"third", 1.0 / 3, 4, "0.3333"},
		{"two_thirds", 2.0 / 3, 4, "0.6667"},
		{"negative_to_minus_zero", -0.00001, 4, "-0.0"},
		{"five_digits", 123.456785, 5, "123.45678"},
		{"half_unchanged", 0.5, 4, "0.5"},
		{"tiny_to_zero", 1e-9, 4, "0.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Round(tc.x, tc.digits))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("Round(%v, %d) marshals to %s, want %s", tc.x, tc.digits, b, tc.want)
			}
		})
	}
}

func TestFloatMarshalJSON(t *testing.T) {
	cases := []struct {
		name string
		x    float64
		want string
	}{
		{"one", 1.0, "1.0"},
		{"half", 0.5, "0.5"},
		{"zero", 0, "0.0"},
		{"minus_zero", math.Copysign(0, -1), "-0.0"},
		{"tenth", 0.1, "0.1"},
		{"negative", -2.5, "-2.5"},
		{"1e16_is_exponent", 1e16, "1e+16"},
		{"1e15_is_fixed", 1e15, "1000000000000000.0"},
		{"largest_fixed", 9999999999999998.0, "9999999999999998.0"},
		{"big_shortest_digits", 12345678901234567.0, "1.2345678901234568e+16"},
		{"1e-5_is_exponent", 1e-5, "1e-05"},
		{"1e-4_is_fixed", 1e-4, "0.0001"},
		{"integral", 123456789.0, "123456789.0"},
		{"small_mantissa", 1.5e-7, "1.5e-07"},
		{"1e22", 1e22, "1e+22"},
		{"max_float", math.MaxFloat64, "1.7976931348623157e+308"},
		{"smallest_denormal", 5e-324, "5e-324"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Float(tc.x))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("Float(%v) marshals to %s, want %s", tc.x, b, tc.want)
			}
			if got := Float(tc.x).String(); got != tc.want {
				t.Errorf("Float(%v).String() = %s, want %s", tc.x, got, tc.want)
			}
		})
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(Float(x)); err == nil {
			t.Errorf("Float(%v) marshalled without error", x)
		}
	}
}

func TestNumberMarshalJSON(t *testing.T) {
	cases := []struct {
		name string
		n    Number
		want string
	}{
		{"int_zero_default", IntNumber(0), "0"},
		{"int", IntNumber(-42), "-42"},
		{"float_integral", FloatNumber(10000), "10000.0"},
		{"float", FloatNumber(Round(2.345, 2)), "2.35"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("marshal %+v = %s, want %s", tc.n, b, tc.want)
			}
		})
	}
}
