package byteview

import (
	"bytes"
	"testing"
)

func TestOfGivesBackTheBytes(t *testing.T) {
	b := []byte("record batch")
	got := Of(&b[0], 6)
	if !bytes.Equal(got, b[:6]) || &got[0] != &b[0] || cap(got) != 6 {
		t.Fatalf("Of = %q (cap %d), want the first 6 bytes of %q in place", got, cap(got), b)
	}
	if Of(nil, 0) != nil {
		t.Fatal("Of(nil, 0) is not nil")
	}
}
